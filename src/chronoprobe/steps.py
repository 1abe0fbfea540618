"""Step kinds: a registry of named functions, and the context a step runs in.

A step kind is a pydantic model of its params and a function ``run(ctx, params, inputs)`` that
writes its outputs into ``ctx.out_dir``. Kinds register with :func:`step_kind`; the built-in ones
are imported by name when first used, and users add their own by listing a module under
``plugins:`` in the experiment config.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, Field, RootModel, create_model

from chronoprobe.inputs import file_identity, is_pipe
from chronoprobe.params import cli_of, field_default, option_flag, splits_commas
from chronoprobe.registry import Registry

# where plugins written for 0.4 import them from
from chronoprobe.step_context import SHARDS_DIR, StepContext

STEP_RECORD = "step.json"  # what a step folder holds besides its outputs: params, inputs, files
# The command groups, in the order --help lists them, and the help of each. A step kind names
# its group in its ``command``; a kind that is a whole group (``command=(GROUP,)``) is
# described by its group's help. A test checks that every kind's group is here.
COMMAND_GROUPS = {
    "kg": "Build, inspect and export temporal knowledge graphs (KG directories of Parquet files).",
    "build": "Build probe sets from a KG directory.",
    "import": "Import released datasets (TempLAMA, DynamicTempLAMA, ECBD, CronQuestions) as the "
    "probe sets `build` writes.",
    "train": "Train masked LMs on temporal facts: LAMA-TK memorisation, model series, pretraining.",
    "probe": "Probe models with a view over a probe set: rank, fill, score or generate.",
    "tkg": "Temporal KG embeddings: train ComplEx, TComplEx, TNTComplEx or TimePlex on a KG "
    "directory by link prediction, and rank held-out facts (filtered MRR, Hits@k, time "
    "accuracy).",
    "kgqa": "Temporal KG question answering: train CronKGQA, EmbedKGQA or an LM-only baseline "
    "on a CronQuestions directory with the embeddings of a TKG checkpoint, and report Hits@1/10 "
    "as the CronQuestions paper does (simple vs complex, per reasoning type, entity vs time "
    "answers).",
    "export": "Write probe sets for other tools: lm-evaluation-harness tasks.",
}

StepFunction = Callable[["StepContext", Any, dict[str, Path]], None]


@dataclass(frozen=True)
class Input:
    """A named input of a step kind: in a config, ``inputs: {NAME: <step id>}``; on the command
    line, a directory argument (or ``--NAME DIR`` when ``option``)."""

    name: str
    help: str
    required: bool = True
    option: bool = False
    # the command line may name a file instead: its folder is the input, its name this param
    file_param: str | None = None
    # the input's old name, still read (with a warning) until renames.REMOVED_IN
    formerly: str | None = None


@dataclass(frozen=True, kw_only=True)
class StepKind:
    """An operation: its params, its function, and what it reads.

    ``inputs`` None means undeclared (a plugin's kind may read any names). ``check(params,
    input_names)`` returns the problems no single field shows (a param that needs an input, two
    that exclude each other), so a config fails before its first step runs. ``command`` is the
    CLI command that runs the kind as a one-step experiment (None: a step kind only).
    """

    name: str
    model: type[BaseModel] | None  # None for a kind with variants: see ``params``
    run: StepFunction
    cacheable: bool = True  # False for steps that read the whole run (the report)
    # extra data for the cache key that params alone miss (e.g. what the input files hold)
    fingerprint: Callable[[Any], Any] | None = None
    inputs: tuple[Input, ...] | None = None
    check: Callable[[Any, frozenset[str]], list[str]] | None = None
    command: tuple[str, ...] | None = None
    # a family of operations sharing this kind (builders, KG sources): its members, and the
    # params key that names one; each member is a CLI command of its own under ``command``
    variants: Variants | None = None
    # what the command line prints of a finished step's output directory
    show: Callable[[Path], Any] | None = None
    help: str = ""  # a kind with variants: its command group's help (else the run's docstring)
    out_optional: bool = False  # the command may run without --out (evaluations: it prints)
    # (field, copy): a run with a larger ``field`` (epochs) goes on from a finished run of the
    # same step with a smaller one; ``copy(finished_entry, work_dir)`` puts its state in place
    continues: tuple[str, Callable[[Path, Path], None]] | None = None
    # the step trains a model from a seed: an experiment with ``seeds`` repeats it (and the
    # steps that read its output) once per seed
    trains: bool = False
    # (run directory) -> why the step could not write what it writes beside the steps (the
    # report's report.html), checked before the run writes anything
    run_dir_check: Callable[[Path], list[str]] | None = None

    @property
    def params(self) -> type[BaseModel]:
        """The params model a config's step is validated with (for a kind with variants, the
        union of its members' params, tagged by the variants' key; rebuilt when one is added)."""
        if self.variants is not None:
            return self.variants.union(self.name)
        assert self.model is not None
        return self.model

    def problems(self, params: Any, names: Iterable[str]) -> list[str]:
        """What is wrong with these params given inputs of these names."""
        given = frozenset(names)
        out: list[str] = []
        if self.inputs is not None:
            known = {i.name for i in self.inputs}
            for name in sorted(given - known):
                accepted = ", ".join(sorted(known)) or "none"
                out.append(
                    f"inputs.{name}: {self.name} takes no input {name!r} (it takes: {accepted})"
                )
            for declared in self.inputs:
                if declared.required and declared.name not in given:
                    out.append(f"inputs.{declared.name}: required: {declared.help}")
        if self.check is not None:
            out.extend(self.check(params, given))
        return out


# kinds that ship with chronoprobe: name -> module that registers it, imported on first use
STEP_KINDS: Registry[StepKind] = Registry(
    "step kind",
    {
        "kg": "chronoprobe.kg.ops",
        "memorize": "chronoprobe.train.ops",
        "pretrain": "chronoprobe.train.ops",
        "build": "chronoprobe.datasets.ops",
        "import": "chronoprobe.datasets.imports",
        "report": "chronoprobe.report.step",
        "series": "chronoprobe.train.ops",
        "probe": "chronoprobe.probes.ops",
        "tkg": "chronoprobe.tkg.ops",
        "tkg-eval": "chronoprobe.tkg.ops",
        "kgqa": "chronoprobe.kgqa.ops",
        "kgqa-eval": "chronoprobe.kgqa.ops",
        "lm-eval": "chronoprobe.export.lm_eval",
    },
)


def step_kind(
    name: str,
    params: type[BaseModel] | None,
    *,
    cacheable: bool = True,
    fingerprint: Callable[[Any], Any] | None = None,
    inputs: Sequence[Input] | None = None,
    check: Callable[[Any, frozenset[str]], list[str]] | None = None,
    command: Sequence[str] | None = None,
    variants: Variants | None = None,
    show: Callable[[Path], Any] | None = None,
    help: str = "",
    out_optional: bool = False,
    continues: tuple[str, Callable[[Path, Path], None]] | None = None,
    trains: bool = False,
    run_dir_check: Callable[[Path], list[str]] | None = None,
) -> Callable[[StepFunction], StepFunction]:
    """Register ``run(ctx, params, inputs)`` as the step kind ``name``."""

    def register(function: StepFunction) -> StepFunction:
        kind = StepKind(
            name=name,
            model=params,
            run=function,
            cacheable=cacheable,
            fingerprint=fingerprint,
            inputs=tuple(inputs) if inputs is not None else None,
            check=check,
            command=tuple(command) if command else None,
            variants=variants,
            show=show,
            help=help,
            out_optional=out_optional,
            continues=continues,
            trains=trains,
            run_dir_check=run_dir_check,
        )
        STEP_KINDS.add(name, kind)
        return function

    return register


@dataclass(frozen=True)
class Variant:
    """One member of a family of operations that share a step kind (a builder, a KG source, a
    view): its own params model and function; the step's params hold ``{key: name, **params}``.
    Registries of such families may hold any objects with these four attributes. ``show(out)``
    is what the command line prints of a finished step's output (its report section is the
    one registered for ``KIND:NAME``, see :mod:`chronoprobe.report.sections`). ``needs``: the
    kind's optional inputs this member requires, and no member that does not name one gets it."""

    name: str
    params: type[BaseModel]
    run: StepFunction
    help: str = ""
    show: Callable[[Path], Any] | None = None
    needs: tuple[str, ...] = ()
    card: Any = None  # an importer's Release, for the card of what it imports


@dataclass(frozen=True)
class Variants:
    key: str
    registry: Registry[Any]  # entries with .name, .params, .run and .help, as Variant has
    # the one step function of every member (the probe views share one); None: each its own
    run: StepFunction | None = None

    def get(self, name: str) -> Any:
        return self.registry.get(name)

    def run_of(self, member: Any) -> StepFunction:
        return self.run or member.run

    def members(self) -> list[Any]:
        return [entry for _, entry in self.registry.items()]

    def union(self, kind: str) -> type[BaseModel]:
        """A params model accepting any member's params, chosen by ``key`` (a tagged union)."""
        return _tagged_union(kind, self.key, tuple(self.members()))


@cache
def _tagged_union(kind: str, key: str, members: tuple[Any, ...]) -> type[BaseModel]:
    tagged = tuple(
        create_model(m.params.__name__, __base__=m.params, **{key: (Literal[m.name], ...)})
        for m in members
    )
    union = Annotated[Union[tagged], Field(discriminator=key)]  # noqa: UP007
    title = "".join(part.title() for part in kind.split("-"))
    return type(f"{title}Params", (RootModel[union],), {"__module__": __name__})


def variant(
    registry: Registry[Any],
    name: str,
    params: type[BaseModel],
    show: Callable[[Path], Any] | None = None,
    needs: tuple[str, ...] = (),
    card: Any = None,
) -> Callable[[StepFunction], StepFunction]:
    """Decorator: register a step function as the member ``name`` of ``registry``, run with
    ``params`` (its output summed up by ``show``; ``needs``, ``card``: see :class:`Variant`)."""

    def register(run: StepFunction) -> StepFunction:
        registry.add(name, Variant(name, params, run, show=show, needs=needs, card=card))
        return run

    return register


def variant_kind(name: str, key: str, registry: Registry[Any], **options: Any) -> StepKind:
    """Register a step kind whose params pick one member of ``registry`` by ``key``; each
    member's ``run`` (or the kind's ``run``, when its members share one) gets the member's own
    params (the union's chosen member), and, unless the kind has a ``show`` of its own, the
    member's ``show`` sums up its output. The kind is a command group of its own name unless
    it names another ``command``."""
    variants = Variants(key, registry, options.pop("run", None))
    command = options.setdefault("command", (name,)) or ()
    if len(command) == 1:
        options.setdefault("help", COMMAND_GROUPS.get(command[0], ""))

    def show(out: Path) -> Any:
        record = out / "step.json"
        chosen = json.loads(record.read_text(encoding="utf-8"))["params"][key]
        member = variants.get(chosen) if chosen in registry else None
        return member.show(out) if getattr(member, "show", None) else None

    options.setdefault("show", show)

    def run(ctx: StepContext, params: Any, inputs: dict[str, Path]) -> None:
        chosen = params.root
        variants.run_of(variants.get(getattr(chosen, key)))(ctx, chosen, inputs)

    own_check, own_fingerprint = options.pop("check", None), options.pop("fingerprint", None)

    optional = {i.name: i for i in options.get("inputs") or () if not i.required}
    words = " ".join(command or (name,))

    def member_inputs(chosen: Any, names: frozenset[str]) -> list[str]:
        """The optional inputs a member needs are given to it, and to no other member."""
        member = variants.get(getattr(chosen, key))
        needs = set(getattr(member, "needs", ()))
        problems = []
        for n in sorted(needs - set(names)):
            problems.append(f"inputs.{n}: required by {words} {member.name}: {optional[n].help}")
        for n in sorted(set(names) & set(optional) - needs):
            readers = [m.name for m in variants.members() if n in getattr(m, "needs", ())]
            if readers:
                only = f"{words} {', '.join(readers)}"
                problems.append(f"inputs.{n}: only {only} reads it, not {words} {member.name}")
        return problems

    def check(params: Any, names: frozenset[str]) -> list[str]:
        own = own_check(params.root, names) if own_check else []
        return member_inputs(params.root, names) + own

    def fingerprint(params: Any) -> Any:
        return own_fingerprint(params.root)

    step_kind(
        name,
        None,
        check=check,
        fingerprint=fingerprint if own_fingerprint else None,
        variants=variants,
        **options,
    )(run)
    return STEP_KINDS.get(name)


@dataclass(frozen=True)
class ReadOnce:
    """A fingerprint saying a step's input cannot be told again: a pipe (``<(zcat dump.gz)``,
    ``/dev/stdin``) has no size or time that says what it held, and is gone once read; a model
    given as a Python object has no files that say what it is. The step runs every time, under
    a key of its own, and is not cached; ``why`` says so in the run's log."""

    why: str
    token: str = field(default_factory=lambda: os.urandom(16).hex())


def files_fingerprint(params: Any) -> list | ReadOnce | None:
    """For steps that read files named in their params (``paths``, a ``mapping``, an
    ``aliases`` KG): files change without their names changing, so the cache keys on what each
    holds too, of every file under a folder given (see :func:`chronoprobe.inputs.file_identity`)."""
    named = [getattr(params, key, None) for key in ("mapping", "aliases")]
    paths = [*getattr(params, "paths", []), *filter(None, named)]
    files = [f for p in paths for f in (sorted(p.rglob("*")) if p.is_dir() else [p])]
    pipes = [str(f) for f in files if is_pipe(f)]
    if pipes:
        return ReadOnce(f"{', '.join(pipes)} is a pipe, read once")
    return [[str(f), *file_identity(f)] for f in files if f.is_file()] or None


def checkpoint_continuation(entry: Path, work: Path) -> None:
    """For trainers that resume from a checkpoint in ``work/.shards/checkpoint``: put a
    finished run's checkpoint there (every file but its step record, metrics and
    predictions), optimizer state included. Copied without the entry's modes: its files are
    read-only, and training goes on writing these."""
    target = work / SHARDS_DIR / "checkpoint"
    target.mkdir(parents=True, exist_ok=True)
    for path in entry.iterdir():
        if path.name in ("step.json", "metrics.json", "predictions.parquet"):
            continue
        if path.is_dir():
            shutil.copytree(path, target / path.name, copy_function=shutil.copyfile)
        else:
            shutil.copyfile(path, target / path.name)


def get_kind(name: str) -> StepKind:
    try:
        return STEP_KINDS.get(name)
    except KeyError as err:
        raise KeyError(
            f"{err.args[0]} (add your own with a module listed under `plugins:`)"
        ) from None


def command_line(kind: StepKind, params: BaseModel, inputs: dict[str, Path]) -> str:
    """The command that runs ``kind`` with ``params`` on ``inputs``, as :func:`make_command`
    reads it: the inputs and argument fields in order, then every option whose value is not its
    default (``-o OUT`` left for the reader to add)."""
    import shlex

    words = ["chronoprobe", *(kind.command or (kind.name,))]
    key = kind.variants.key if kind.variants is not None else None
    if key is not None:
        words.append(str(getattr(params, key)))
    options: list[str] = []
    for declared in kind.inputs or ():
        if declared.name in inputs:
            flag = [option_flag(declared.name)] if declared.option else []
            (options if declared.option else words).extend([*flag, str(inputs[declared.name])])
    for name, declared_field in type(params).model_fields.items():
        value = getattr(params, name)
        if name == key:
            continue
        if cli_of(declared_field).argument:
            words += [str(v) for v in value] if isinstance(value, list) else [str(value)]
            continue
        if value == field_default(declared_field) or value is None:
            continue
        flag = option_flag(name)
        if isinstance(value, bool):
            options.append(flag if value else f"--no-{flag[2:]}")
        elif isinstance(value, dict):
            options += [part for k, v in value.items() for part in (flag, f"{k}={v}")]
        elif isinstance(value, list):
            options += (
                [flag, ",".join(map(str, value))]
                if splits_commas(declared_field)
                else [part for v in value for part in (flag, str(v))]
            )
        else:
            options += [flag, str(value)]
    return shlex.join([*words, *options])


def read_step_record(step_dir: Path) -> dict[str, Any] | None:
    """A step folder's ``step.json`` if it is one chronoprobe could have written, else None."""
    path = step_dir / STEP_RECORD
    if path.is_symlink() or not path.is_file() or path.stat().st_size > 64 << 20:
        return None
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return None
    outputs = record.get("outputs") if isinstance(record, dict) else None
    if not isinstance(outputs, list) or not all(isinstance(name, str) for name in outputs):
        return None
    if not isinstance(record.get("files", {}), dict):
        return None
    return record
