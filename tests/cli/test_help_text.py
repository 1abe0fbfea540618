"""Command help as a user sees it: paragraphs wrapped to the terminal, placeholders kept."""

from __future__ import annotations

from typer.testing import CliRunner

from chronoprobe.cli.help_text import reflow
from chronoprobe.cli.main import app


def test_reflow_joins_the_lines_of_a_paragraph_and_keeps_lists_and_indented_lines():
    text = """Summary line.

    A paragraph wrapped
    at the source's width.

    - a list item
    - another one

    Example:
        chronoprobe run demo.yaml
    """
    assert reflow(text) == (
        "Summary line.\n\nA paragraph wrapped at the source's width.\n\n"
        "- a list item\n- another one\n\nExample:\n    chronoprobe run demo.yaml"
    )


def help_lines(*command: str) -> list[str]:
    result = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return [line.strip() for line in result.output.splitlines()]


def test_a_paragraph_of_help_is_wrapped_to_the_terminal_not_to_the_source():
    # The docstring breaks this sentence after "counted by"; on a wide terminal it is one line.
    lines = help_lines("kg", "convert")
    assert any("skipped and counted by reason; with strict the first one" in line for line in lines)


def test_placeholders_in_angle_brackets_are_shown():
    assert any("RUNDIR/steps/<step id>/" in line for line in help_lines("run"))
    assert any("named <step id>_<file name>" in line for line in help_lines("results"))
    templama = help_lines("import", "templama")
    assert any("query with _X_ and its answers" in line for line in templama)


def test_a_probe_lists_its_shared_options_in_panels_after_its_own():
    """The view's own options first, then model loading, served models and the engine, each
    under its heading (a panel), with every option in the panel of the class declaring it."""
    import re

    from chronoprobe.params import panel_of
    from chronoprobe.probes.generate import GenerateParams

    printed = CliRunner().invoke(app, ["probe", "generate", "--help"], env={"COLUMNS": "120"})
    assert printed.exit_code == 0
    panels = re.findall(r"╭─ ([^─]+?) ─", printed.output)
    assert panels == ["Arguments", "Options", "Model loading", "Served models (openai:)", "Engine"]
    assert panel_of(GenerateParams, "template") is None  # the view's own
    assert panel_of(GenerateParams, "device") == "Model loading"  # declared below, grouped there
    assert panel_of(GenerateParams, "base_url") == "Served models (openai:)"
    assert panel_of(GenerateParams, "workers") == "Engine"
    served = printed.output[printed.output.index("Served models") :]
    assert "--base-url" in served[: served.index("Engine")] and "--template" not in served
