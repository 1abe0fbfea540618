"""``chronoprobe list``: what the registries hold, family by family.

Like ``lm_eval --tasks list``, it reads the registries themselves (a plugin's entries
included), so it is never out of date: each family with its builders, importers, views,
trainers, evaluators, models, report sections and docs pages, or one registry's entries with
the family each belongs to and what it does.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from typing import Any

import typer

from chronoprobe.cli.errors import user_errors
from chronoprobe.cli.help_text import reflowed
from chronoprobe.errors import UserError
from chronoprobe.registry import summary

SHARED = "(shared)"  # the family column of a part every family uses
FORMATS = ("table", "json", "markdown")


def _variant_help(entry: Any) -> str:
    """A builder's or importer's help: its own, else its function's docstring."""
    return summary(getattr(entry, "help", "") or inspect.getdoc(entry.run))


def _owners(part: str) -> dict[str, str]:
    """Part name -> the family that names it among its ``part`` (builders, views...)."""
    from chronoprobe.families import FAMILIES

    return {name: f.name for _, f in FAMILIES.items() for name in getattr(f, part)}


Rows = list[dict[str, Any]]


def _families() -> Rows:
    from chronoprobe.families import FAMILIES
    from chronoprobe.report.sections import SECTIONS
    from chronoprobe.steps import STEP_KINDS

    sections = SECTIONS.names()
    rows = []
    for _, family in FAMILIES.items():
        trains = [k for k in family.kinds if k in STEP_KINDS and STEP_KINDS.get(k).trains]
        rows.append(
            {
                "family": family.name,
                "title": family.title,
                "also": list(family.aliases),
                "build": list(family.builders),
                "import": list(family.importers),
                "views": list(family.views),
                "train": trains,
                "evaluate": [k for k in family.kinds if k not in trains],
                "models": list(family.models),
                "report sections": family.sections(sections),
                "docs": list(family.docs),
                "paper": family.paper,
            }
        )
    return rows


def _views() -> Rows:
    from chronoprobe.probes.view import VIEWS
    from chronoprobe.report.sections import section_kind

    owners = _owners("views")
    return [
        {
            "view": name,
            "family": owners.get(name, ""),
            "rows": view.rows.file,
            "drift rows": view.drift is not None,
            "report section": section_kind("probe", {"params": {"view": name}}).kind,
            "about": summary(view.help),
        }
        for name, view in VIEWS.items()
    ]


def _builders() -> Rows:
    from chronoprobe.datasets.builders import BUILDERS
    from chronoprobe.report.sections import section_kind

    owners = _owners("builders")
    return [
        {
            "builder": name,
            "family": owners.get(name, ""),
            "report section": section_kind("build", {"params": {"family": name}}).kind,
            "about": _variant_help(builder),
        }
        for name, builder in BUILDERS.items()
    ]


def _importers() -> Rows:
    from chronoprobe.datasets.imports import IMPORTERS

    owners = _owners("importers")
    return [
        {"importer": name, "family": owners.get(name, ""), "about": _variant_help(importer)}
        for name, importer in IMPORTERS.items()
    ]


def _spec_forms() -> Rows:
    """The forms of a model spec, as a user types them after ``-m``."""
    from chronoprobe.models.spec import PACKAGES

    packages = [
        (
            f"package:{name}",
            f"{weights.filename.removesuffix('.gguf')}, shipped by the {weights.pip_name} "
            "package (offline); `chronoprobe models path` prints its converted weights",
        )
        for name, weights in PACKAGES.items()
    ]
    forms = [
        *packages,
        (
            "openai:MODEL",
            "MODEL behind an OpenAI-compatible server (--base-url; an API, vLLM, Ollama); "
            "`chronoprobe models serve SPEC` starts one on 127.0.0.1",
        ),
        ("ORG/NAME", "a Hugging Face id: from the hub, or offline from its local cache"),
        ("DIR", "a local save_pretrained directory, or a `train` step's output"),
        ("FILE.gguf", "GGUF weights, converted once into a save_pretrained directory"),
    ]
    return [
        {"model": form, "registry": "model spec", "family": SHARED, "about": about}
        for form, about in forms
    ]


def _models() -> Rows:
    from chronoprobe.families import SHARED_MODELS
    from chronoprobe.kgqa.params import QA_MODELS
    from chronoprobe.models.registry import ADAPTERS
    from chronoprobe.tkg.params import TKG_MODELS

    owners = _owners("models")
    return _spec_forms() + [
        {
            "model": name,
            "registry": what,
            "family": SHARED if name in SHARED_MODELS else owners.get(name, ""),
            "about": registry.describe(name),
        }
        for what, registry in (
            ("language model", ADAPTERS),
            ("TKG embedding", TKG_MODELS),
            ("QA model", QA_MODELS),
        )
        for name in registry.names()
    ]


def _kinds() -> Rows:
    from chronoprobe.families import SHARED_KINDS
    from chronoprobe.steps import STEP_KINDS

    owners = _owners("kinds")
    return [
        {
            "kind": name,
            "family": SHARED if name in SHARED_KINDS else owners.get(name, ""),
            "command": f"chronoprobe {' '.join(kind.command)}" if kind.command else "",
            "trains": kind.trains,
            "about": summary(kind.help or inspect.getdoc(kind.run)),
        }
        for name, kind in STEP_KINDS.items()
    ]


def _sections() -> Rows:
    from chronoprobe.families import FAMILIES
    from chronoprobe.report.sections import SECTIONS

    known = SECTIONS.names()
    owners = {key: f.name for _, f in FAMILIES.items() for key in f.sections(known)}
    return [
        {
            "section": key,
            "family": owners.get(key, SHARED),
            "module": entry.build.__module__,
            "about": summary(inspect.getdoc(entry.build)),
        }
        for key, entry in SECTIONS.items()
    ]


TABLES: dict[str, Callable[[], Rows]] = {
    "families": _families,
    "views": _views,
    "builders": _builders,
    "importers": _importers,
    "models": _models,
    "kinds": _kinds,
    "sections": _sections,
}


def catalog(what: str) -> Rows:
    """The rows ``chronoprobe list WHAT`` shows: one of :data:`TABLES`, or a family's name or
    alias (that family's row)."""
    if what in TABLES:
        return TABLES[what]()
    from chronoprobe.families import family_named

    try:
        family = family_named(what)
    except KeyError as err:
        raise UserError(
            f"list {what}: choose one of {', '.join(TABLES)}, or a family ({err.args[0]})"
        ) from None
    return [row for row in _families() if row["family"] == family.name]


def _cell(value: Any) -> Any:
    return ", ".join(value) if isinstance(value, list) else value


@reflowed
@user_errors
def list_entries(
    what: str = typer.Argument(
        "families",
        help=f"What to list: {', '.join(TABLES)}, or one family by its name or another name "
        "it goes by (e.g. tkg).",
        metavar="WHAT",
    ),
    fmt: str = typer.Option(
        "table",
        "--format",
        help="table (for the terminal), json (lists as lists, for a program) or markdown.",
    ),
) -> None:
    """List the families and the registries' entries: builders, importers, views, models,
    step kinds and report sections, with the family each belongs to.

    Everything listed comes from the registries, plugins named in CHRONOPROBE_PLUGINS
    included. A part no family claims has an empty family; one every family uses is (shared).

    Example: chronoprobe list views --format json
    """
    from rich.console import Console

    from chronoprobe.cli.plugins import import_user_plugins
    from chronoprobe.core.plugins import waiting_plugins
    from chronoprobe.core.tables import ResultTable

    if fmt not in FORMATS:
        raise UserError(f"--format {fmt}: choose one of {', '.join(FORMATS)}")
    import_user_plugins()
    rows = catalog(what)
    waiting = waiting_plugins()
    if waiting:  # on stderr: a program reading --format json reads stdout alone
        names = ", ".join(plugin.describe() for plugin in waiting)
        typer.echo(
            f"not imported, installed plugins not allowed: {names} (chronoprobe plugins allow "
            "NAME)",
            err=True,
        )
    if fmt == "json":
        typer.echo(json.dumps(rows, indent=2))
        return
    # the families' papers make the table too wide; one family's row shows its paper
    columns = [c for c in rows[0] if c != "paper" or what != "families"]
    table = ResultTable(columns, [[_cell(row[c]) for c in columns] for row in rows], title=what)
    if fmt == "markdown":
        typer.echo(table.render("markdown"), nl=False)
    else:
        Console(emoji=False).print(table)
