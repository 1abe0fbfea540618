"""``python -m chronoprobe``: the ``chronoprobe`` command."""

from chronoprobe.cli.main import app

app(prog_name="chronoprobe")
