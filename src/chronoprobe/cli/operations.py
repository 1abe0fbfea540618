"""Commands made from step kinds: every operation's options come from its params model.

A step kind with a ``command`` becomes that command; a kind with variants (the builders, the
KG sources) becomes one command per variant under its group. Inputs are positional directory
arguments (or ``--NAME DIR``), fields are options (``batch_size`` -> ``--batch-size``) with the
field's default, description and choices (``Literal`` values or a registry's names), and every
command adds ``--out``, ``--no-cache``, ``--json``, ``--threads`` and ``--max-record-bytes``.
The command validates the values with the same params model a config's step is validated with
and runs the step as a one-step experiment, so nothing is declared twice.
"""

from __future__ import annotations

import inspect
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import typer
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo
from rich.console import Console
from rich.markup import escape

from chronoprobe.cli.errors import user_errors
from chronoprobe.cli.help_text import reflow
from chronoprobe.cli.record_limit import max_record_option, use_max_record
from chronoprobe.cli.threads import threads_option, use_threads
from chronoprobe.cli.wording import current_context, speaking, spoken, spoken_notes
from chronoprobe.errors import UserError
from chronoprobe.params import (
    Choice,
    Cli,
    cli_of,
    field_default,
    option_flag,
    panel_of,
    refused,
    splits_commas,
    unwrap,
)
from chronoprobe.renames import both_given, deprecated, renamed_fields, tell_user
from chronoprobe.steps import StepKind, Variant, read_step_record

console = Console(stderr=True, emoji=False)

# options every command adds; a params field may not take these names
OUT, NO_CACHE, JSON, THREADS, RECORDS = "out", "no_cache", "as_json", "threads", "max_record"


def _choices(values: list[str]) -> Any:
    return Literal[tuple(values)]  # typer offers a Literal's values as choices


def _option_type(field: FieldInfo) -> Any:
    """The type typer parses a field as (a ``Literal`` of the names for a choice)."""
    annotation, metadata = unwrap(field.annotation)
    metadata += field.metadata
    choice = next((m for m in metadata if isinstance(m, Choice)), None)
    if choice is not None:
        return _choices(choice.registry.names())
    origin = get_origin(annotation)
    if origin is Literal:
        return _choices([str(v) for v in get_args(annotation)])
    if origin is dict:
        return list[str]  # KEY=VALUE, repeated
    if origin is list:
        item, _ = unwrap(get_args(annotation)[0])
        if get_origin(item) is Literal or splits_commas(field):
            return list[str]  # typer has no list[Literal]; "1,2,5" is parsed after the split
        return list[item]
    if annotation in (str, int, float, bool) or annotation is Path:
        return annotation
    if isinstance(annotation, type) and issubclass(annotation, Path):
        return Path
    raise TypeError(f"a command option cannot have the type {annotation!r}")


def _help_text(field: FieldInfo) -> str:
    """The description, plus the choices of a list of ``Literal`` values (typer shows no
    choices for lists) and how a list is given."""
    text = field.description or ""
    annotation, _ = unwrap(field.annotation)
    if get_origin(annotation) is list:
        item, _ = unwrap(get_args(annotation)[0])
        if get_origin(item) is Literal:
            text += f" One of: {', '.join(map(str, get_args(item)))}."
        if cli_of(field).argument:
            text += " One or more."
        elif splits_commas(field):
            text += " Repeat the option or separate values with commas."
        else:
            text += " Repeat the option for several."
    return escape(text.strip())  # brackets are text (pip install 'chronoprobe[ray]')


def _is_dict(field: FieldInfo) -> bool:
    return get_origin(unwrap(field.annotation)[0]) is dict


def _as_dict(name: str, pairs: list[str]) -> dict[str, str]:
    """``--name KEY=VALUE`` options as a mapping."""
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            flag = option_flag(name)
            raise UserError(f"{flag}: expected KEY=VALUE, not {pair!r}")
        out[key] = value
    return out


def _field_parameter(
    name: str, field: FieldInfo, panel: str | None, alias: bool = False
) -> inspect.Parameter:
    """The option (or argument) of one params field, in the --help panel of the params class
    that declares it (the command's own options when that class names none); ``alias``: the
    field's old name, ``name``, accepted and hidden from --help."""
    kind = _option_type(field)
    default, cli = field_default(field), cli_of(field)
    extra: dict[str, Any] = {"help": _help_text(field)}
    if alias:
        default, cli, extra["hidden"] = None, Cli(), True
    if panel is not None:
        extra["rich_help_panel"] = panel
    if _is_dict(field):
        default = None
        extra["metavar"] = "KEY=VALUE"
    if cli.argument:
        plural = "..." if get_origin(unwrap(field.annotation)[0]) is list else ""
        info = typer.Argument(default, metavar=name.upper() + plural, **extra)
    else:
        flag = option_flag(name)
        spellings = [f"{flag}/--no-{flag[2:]}"] if kind is bool else [flag]
        if cli.short:
            spellings.append(cli.short)
        info = typer.Option(default, *spellings, **extra)
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=info, annotation=kind)


def _input_parameter(
    kind: StepKind, index: int, hidden: bool = False, alias: bool = False
) -> inspect.Parameter:
    """The command-line parameter of one input (``hidden``: accepted, not in --help; ``alias``:
    the option of its old name, hidden). An option with an old name is required by the step's
    check instead, which the old option also satisfies."""
    declared = kind.inputs[index]  # type: ignore[index]
    renamed = declared.option and declared.formerly
    default = ... if declared.required and not renamed else None
    name = declared.formerly if alias else declared.name
    if declared.option:
        flag = option_flag(name)
        info = typer.Option(default, flag, help=declared.help, hidden=hidden or alias)
    else:
        metavar = declared.name.upper()
        info = typer.Argument(
            default, help=declared.help, show_default=False, metavar=metavar, hidden=hidden
        )
    annotation = Path if default is ... else Path | None
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=info, annotation=annotation
    )


def _fixed_parameters(out_optional: bool) -> list[inspect.Parameter]:
    out = typer.Option(
        None if out_optional else ...,
        "--out",
        "-o",
        help="Directory to write the outputs into (new, or an earlier output)"
        + ("; without it, the results are printed only." if out_optional else "."),
    )
    as_json = typer.Option(False, "--json", help="Also print metrics.json on stdout.")
    no_cache = typer.Option(
        False,
        "--no-cache",
        help="Recompute instead of reusing (or resuming) the cached result of the same inputs "
        "and options.",
    )
    keyword = inspect.Parameter.KEYWORD_ONLY
    return [
        inspect.Parameter(OUT, keyword, default=out, annotation=Path | None),
        inspect.Parameter(NO_CACHE, keyword, default=no_cache, annotation=bool),
        inspect.Parameter(JSON, keyword, default=as_json, annotation=bool),
        inspect.Parameter(THREADS, keyword, default=threads_option(), annotation=int | None),
        inspect.Parameter(RECORDS, keyword, default=max_record_option(), annotation=str | None),
    ]


@contextmanager
def _output(out: Path | None) -> Iterator[Path]:
    """``--out``, or a temporary folder removed afterwards when a command may go without."""
    if out is not None:
        yield out
        return
    with tempfile.TemporaryDirectory(prefix="chronoprobe-") as folder:
        yield Path(folder) / "out"


def _untouched(out: Path | None) -> str:
    """What a refused or interrupted command adds about its --out ("; nothing written to
    OUT"); nothing without --out, whose temporary folder the user never named."""
    return "" if out is None else f"; nothing written to {out}"


def validate(
    model: type[BaseModel], values: dict[str, Any], arguments: frozenset[str] = frozenset()
) -> BaseModel:
    """``model`` from command-line values; errors name what a user typed: the option's flag,
    or the name of a positional argument (one of ``arguments``)."""
    try:
        return model.model_validate(values)
    except ValidationError as err:

        def flag(name: str) -> str:
            return name if name in arguments else option_flag(name)

        raise refused(err, values, flag, echo=True) from None


def _old_options(values: dict[str, Any], renames: dict[str, str], into: dict[str, Any]) -> None:
    """The values of old options (``renames``: old -> new) moved to their new names in
    ``into``, each use told on stderr; an old option given with its new one is refused."""
    context = current_context()
    for old, new in renames.items():
        value = values.pop(old)
        if value is None or value == []:
            continue
        if getattr(context.get_parameter_source(new), "name", None) == "COMMANDLINE":
            raise both_given(option_flag(old), option_flag(new))
        tell_user(deprecated(option_flag(old), option_flag(new)))
        into[new] = value


def _step_folder(value: Any) -> Path | None:
    """The folder a model spec option names when it is a step's output (``probe --model DIR``
    of 0.5, which named a trained step), else None."""
    if not isinstance(value, list) or len(value) != 1:
        return None
    folder = Path(value[0])
    return folder if folder.is_dir() and read_step_record(folder) is not None else None


def _missing_input(kind: StepKind, name: str, path: Path, model: type[BaseModel]) -> str:
    """The error for an input that does not exist, with a hint where the user likely meant a
    model spec (``probe ... --trained package:smollm2`` names a training step's folder)."""
    declared = next(d for d in kind.inputs or () if d.name == name)
    flag = option_flag(name) if declared.option else repr(name)
    message = f"{path}: no such file or directory (input {flag})"
    field = model.model_fields.get("model")
    if field is not None and name in ("trained", "series"):
        from chronoprobe.models.spec import parse_spec

        short = cli_of(field).short
        spelled = f"{short}/--model" if short else "--model"
        try:
            scheme = parse_spec(str(path)).scheme
        except (ValueError, FileNotFoundError):
            scheme = None
        named = f"{path} names a model by its {scheme} spec" if scheme else "to probe a model"
        message += (
            f"; {flag} is a folder written by a training step, and {named}: use {spelled} "
            f"{path} (a Hugging Face id, a .gguf file, package:smollm2, openai:MODEL)"
        )
    return message


def make_command(
    kind: StepKind,
    model: type[BaseModel],
    help_text: str,
    fixed: dict[str, Any] | None = None,
    name: str | None = None,
    unread: frozenset[str] = frozenset(),
) -> Callable[..., None]:
    """A typer command function running ``kind`` with ``model``'s fields as options; the
    inputs named in ``unread`` (another member's own) are left out of --help (given, they are
    refused saying which member reads them)."""
    fixed = fixed or {}
    step_id = name or " ".join(kind.command or (kind.name,))
    declared = kind.inputs or ()
    inputs = [_input_parameter(kind, i, d.name in unread) for i, d in enumerate(declared)]
    panels = {n: panel_of(model, n) for n in model.model_fields if n not in fixed}
    order = [None, *dict.fromkeys(c.__dict__.get("panel") for c in model.__mro__)]
    fields = [
        _field_parameter(n, model.model_fields[n], panel)
        for n, panel in sorted(panels.items(), key=lambda item: order.index(item[1]))
    ]
    # old names: of fields, hidden options; of an option input, a hidden option too, unless a
    # field took its name (probe's --model, now a spec): then a step's folder given there
    renames = {
        old: new
        for old, new in renamed_fields(model).items()
        if new in model.model_fields and new not in fixed
    }
    taken = {d.formerly: d.name for d in declared if d.formerly in model.model_fields}
    moved = {
        d.formerly: d.name for d in declared if d.option and d.formerly and d.formerly not in taken
    }
    aliases = [
        _field_parameter(old, model.model_fields[new], None, True) for old, new in renames.items()
    ]
    aliases += [
        _input_parameter(kind, i, alias=True) for i, d in enumerate(declared) if d.formerly in moved
    ]
    parameters = inputs + fields + aliases + _fixed_parameters(kind.out_optional)
    input_names = {p.name for p in inputs}
    dicts = [n for n, f in model.model_fields.items() if n not in fixed and _is_dict(f)]
    commas = [n for n, f in model.model_fields.items() if n not in fixed and splits_commas(f)]
    arguments = frozenset(n for n, f in model.model_fields.items() if cli_of(f).argument)

    def command(**values: Any) -> None:
        from chronoprobe.runs.single import run_operation

        given = {name: values.pop(name) for name in input_names}
        _old_options(values, renames, values)
        _old_options(values, moved, given)
        for declared in kind.inputs or ():  # a renamed option input, under neither name
            if declared.required and given[declared.name] is None:
                raise UserError(f"{option_flag(declared.name)}: required: {declared.help}")
        for old, new in taken.items():
            folder = _step_folder(values.get(old))
            if folder is not None and given[new] is None:
                tell_user(
                    deprecated(f"{option_flag(old)} {folder}", f"{option_flag(new)} {folder}")
                )
                given[new], values[old] = folder, None
        out, no_cache, as_json = values.pop(OUT), values.pop(NO_CACHE), values.pop(JSON)
        use_threads(values.pop(THREADS))
        use_max_record(values.pop(RECORDS))
        raw = {k: v for k, v in values.items() if v is not None and v != []}
        for name in dicts:
            if name in raw:
                raw[name] = _as_dict(name, raw[name])
        for name in commas:
            if name in raw:
                raw[name] = [
                    part.strip() for v in raw[name] for part in v.split(",") if part.strip()
                ]
        paths = {name: Path(path) for name, path in given.items() if path is not None}
        for name, path in paths.items():
            if not path.exists():
                raise FileNotFoundError(_missing_input(kind, name, path, model))
        keyed = dict(paths)  # a file given for its folder: only the file keys the cache
        for declared in kind.inputs or ():
            path = paths.get(declared.name)
            if declared.file_param and path is not None and path.is_file():
                paths[declared.name] = path.parent
                raw.setdefault(declared.file_param, path.name)
        try:
            params = validate(kind.params, {**fixed, **raw}, arguments)
        except ValueError as err:  # a check of several options names them as a config does
            raise UserError(spoken(str(err), kind, model)) from None
        problems = kind.problems(params, paths)
        if problems:
            raise UserError(spoken("; ".join(problems), kind, model))
        with _output(out) as target, speaking(kind, model, step_id):
            try:
                run_operation(
                    kind,
                    params,
                    paths,
                    target,
                    step_id,
                    use_cache=not no_cache,
                    console=console,
                    keyed=keyed,
                )
            except UserError as err:  # the step computes aside: --out is untouched
                raise UserError(spoken(str(err), kind, model) + _untouched(out)) from err
            except KeyboardInterrupt:  # finished work is in the cache: the same command resumes
                console.print(
                    "[yellow]interrupted[/]: run the same command again to resume"
                    + escape(_untouched(out)),
                    highlight=False,
                    soft_wrap=True,
                )
                raise typer.Exit(130) from None
            if out is not None:
                console.print(
                    f"[green]wrote[/] {escape(str(out))}", highlight=False, soft_wrap=True
                )
            if kind.show is not None:
                shown = spoken_notes(kind.show(target), kind, model)
                if shown is not None:  # a line of text stays one line: a command to paste
                    shout = Console(stderr=as_json, emoji=False)
                    shout.print(shown, soft_wrap=isinstance(shown, str))
            if as_json and (target / "metrics.json").is_file():
                typer.echo((target / "metrics.json").read_text(encoding="utf-8").strip())

    command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in parameters}
    command.__doc__ = reflow(help_text)
    return user_errors(command)


def _help(function: Callable[..., Any]) -> str:
    return inspect.getdoc(function) or ""


def group_commands(kinds: list[StepKind], group: str) -> list[tuple[str, Callable[..., None]]]:
    """(name, command) of every operation under the command group ``group``: a kind whose
    command is ``(group, name)``, or each member of a kind with variants whose command is
    ``(group,)``."""
    out = []
    for kind in kinds:
        if not kind.command or kind.command[0] != group:
            continue
        if kind.variants is not None:
            out += [(v.name, _variant_command(kind, v)) for v in kind.variants.members()]
        else:
            out.append((kind.command[-1], make_command(kind, kind.params, _help(kind.run))))
    return out


def _variant_command(kind: StepKind, variant: Variant) -> Callable[..., None]:
    fixed = {kind.variants.key: variant.name}  # type: ignore[union-attr]
    name = " ".join((*(kind.command or ()), variant.name))
    about = variant.help or _help(kind.variants.run_of(variant))  # type: ignore[union-attr]
    # an optional input some members need is offered to those members only (build's questions)
    needed = {n for m in kind.variants.members() for n in getattr(m, "needs", ())}  # type: ignore[union-attr]
    unread = frozenset(needed - set(getattr(variant, "needs", ())))
    return make_command(kind, variant.params, about, fixed, name, unread)
