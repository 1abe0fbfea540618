"""What a test's subprocess needs to be interrupted as a user's would be."""

from __future__ import annotations

import signal


def interruptible() -> None:
    """``preexec_fn`` giving the child SIGINT's default disposition. A shell starts background
    jobs with SIGINT ignored (``make test &``, ``nohup``), every child inherits that, and Python
    then never raises KeyboardInterrupt: a test sending SIGINT would wait on a process that
    cannot hear it. A terminal's Ctrl-C is what these tests mean."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
