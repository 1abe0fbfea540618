"""Experiment configs: YAML in, validated models out, every error located as ``file:line: key``.

Pydantic validates; the YAML node tree (``yaml.compose``) keeps where each key and item sits, so
a message can point at the line a user has to edit rather than at a Python traceback.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
)

from chronoprobe import safe_yaml
from chronoprobe.core.cache_dir import default_cache_dir
from chronoprobe.core.plugins import plugin_module, user_plugins
from chronoprobe.errors import UserError
from chronoprobe.params import Seed
from chronoprobe.registry import PLUGINS_ENV, import_plugin, nearest
from chronoprobe.renames import deprecated, rename_keys, tell_user
from chronoprobe.runs.seeds import StepRun, seed_problems, step_runs
from chronoprobe.steps import StepKind, get_kind

Loc = tuple[str | int, ...]


class ConfigError(UserError):
    """One or more problems in an experiment config, each as ``file:line: key.path: reason``."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = list(problems)


# Step ids and experiment names become folder names (steps/<id>, runs/<name>); file systems
# allow 255 bytes, and a long name is a typo long before that.
MAX_NAME = 100


class StepConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_-]*$", max_length=MAX_NAME)
    kind: str
    params: dict[str, Any] = Field(default_factory=dict)
    inputs: dict[str, str] = Field(default_factory=dict)


class ExperimentConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$", max_length=MAX_NAME)
    seed: Seed = 0
    # repeat the steps that train (and those that read them) once per seed
    seeds: list[Seed] | None = Field(None, min_length=1)
    cache_dir: Path | None = None
    plugins: list[str] = Field(default_factory=list)
    steps: list[StepConfig] = Field(min_length=1)

    @field_validator("steps", mode="before")
    @classmethod
    def _steps_are_a_list(cls, steps: Any) -> Any:
        if isinstance(steps, dict):
            first = next(iter(steps), "world")
            raise UserError(
                "a list of steps, not a mapping: write each step as `- id: NAME` followed by "
                f"its kind, params and inputs (`- id: {first}`, not `{first}:`)"
            )
        return steps

    @field_validator("seeds")
    @classmethod
    def _distinct_seeds(cls, seeds: list[int] | None) -> list[int] | None:
        if seeds is not None and len(set(seeds)) != len(seeds):
            twice = next(s for s in seeds if seeds.count(s) > 1)
            raise UserError(f"seed {twice} is listed twice; each seed runs once")
        return seeds

    @field_validator("name")
    @classmethod
    def _not_a_path_step(cls, name: str) -> str:
        """The name is the default run directory (runs/NAME): "." or ".." would be the runs
        folder itself or the working directory, which the run would then overwrite."""
        if set(name) == {"."}:
            raise UserError(f"{name!r} is not a usable name; use letters, digits, _ . -")
        return name


@dataclass(frozen=True)
class Experiment:
    """A loaded experiment: the config as written (after ``--set``) and each step's params."""

    path: Path
    config: ExperimentConfig
    params: dict[str, BaseModel]  # step id -> validated params of its kind
    kinds: dict[str, StepKind]  # step id -> its registered kind

    @property
    def cache_root(self) -> Path:
        """The step cache the run uses: the config's ``cache_dir`` (relative to the config),
        else the user's (:func:`~chronoprobe.core.cache_dir.default_cache_dir`)."""
        configured = self.config.cache_dir
        if configured is None:
            return default_cache_dir()
        return configured if configured.is_absolute() else self.path.parent / configured

    def step_runs(self) -> list[StepRun]:
        """Every step the run executes, in order, repeated steps once per seed."""
        return step_runs(self.config.steps, self.kinds, self.config.seed, self.config.seeds)

    def resolved(self) -> dict[str, Any]:
        """The config with every default filled in, as it is written to ``RUNDIR/config.yaml``."""
        data = self.config.model_dump(mode="json")
        if data["seeds"] is None:  # a config without seeds resolves as it always did
            del data["seeds"]
        for step in data["steps"]:
            step["params"] = self.params[step["id"]].model_dump(mode="json")
        return data


def format_loc(loc: Iterable[str | int]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


class _Lines:
    """Where each key path of a YAML document sits: ``demo.yaml:7`` or ``--set key=value``."""

    def __init__(self, path: Path, root: yaml.Node | None) -> None:
        self.where: dict[Loc, str] = {}
        self.name = path.name
        if root is not None:
            self._walk(root, ())

    def _walk(self, node: yaml.Node, loc: Loc) -> None:
        self.where[loc] = f"{self.name}:{node.start_mark.line + 1}"
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                child = (*loc, key.value)
                self._walk(value, child)
                self.where[child] = f"{self.name}:{key.start_mark.line + 1}"
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                self._walk(item, (*loc, i))

    def set_by_override(self, loc: Loc, text: str) -> None:
        self.set_by_option(loc, f"--set {text}")

    def set_by_option(self, loc: Loc, option: str) -> None:
        """``loc`` and everything under it come from a command-line option, not the file."""
        for key in [k for k in self.where if k[: len(loc)] == loc]:
            del self.where[key]
        self.where[loc] = option

    def locate(self, loc: Loc) -> str:
        """The nearest known place: the key itself, else the mapping that lacks it."""
        for end in range(len(loc), -1, -1):
            if loc[:end] in self.where:
                return self.where[loc[:end]]
        return self.name


# A config is a few hundred values; YAML aliases can make a few bytes stand for billions of them
# (the "billion laughs"), which validating would walk one by one. Configs larger than this once
# every alias is expanded are refused before anything walks them (see chronoprobe.safe_yaml).
MAX_EXPANDED_NODES = 100_000


def _duplicate_keys(root: yaml.Node, name: str) -> list[str]:
    """``file:line: key: duplicate key`` for every key written twice in one mapping (YAML loaders
    keep the last one silently, so a user's first setting would vanish)."""
    problems, seen_nodes, stack = [], set(), [root]
    while stack:
        node = stack.pop()
        if id(node) in seen_nodes:
            continue
        seen_nodes.add(id(node))
        if isinstance(node, yaml.MappingNode):
            keys: set[str] = set()
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode) and key.value != "<<":
                    if key.value in keys:
                        line = key.start_mark.line + 1
                        problems.append(f"{name}:{line}: {key.value}: duplicate key")
                    keys.add(key.value)
                stack.append(value)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    return sorted(problems, key=lambda p: int(p.split(":")[1]))


def _parse_yaml(path: Path) -> tuple[Any, yaml.Node | None]:
    if not path.is_file():
        if path.exists():
            raise ConfigError([f"{path}: not a file; pass an experiment config (YAML)"])
        raise FileNotFoundError(f"{path}: no such experiment config")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise ConfigError(
            [f"{path.name}: not UTF-8 text (byte {err.start}): {err.reason}"]
        ) from None
    try:
        root = safe_yaml.compose(text, MAX_EXPANDED_NODES)
        if root is not None:
            duplicates = _duplicate_keys(root, path.name)
            if duplicates:
                raise ConfigError(duplicates)
        return safe_yaml.construct(root), root
    except yaml.YAMLError as err:
        line, reason = safe_yaml.problem_of(err)
        where = f"{path.name}:{line}" if line is not None else path.name
        raise ConfigError([f"{where}: {reason}"]) from None


def _apply_override(data: dict, text: str, lines: _Lines) -> None:
    """``steps.world.params.facts=5000``: steps are addressed by id (or index), values are YAML."""
    key, sep, raw = text.partition("=")
    if not sep or not key:
        raise ConfigError([f"--set {text}: expected KEY=VALUE, e.g. steps.world.params.facts=5000"])
    try:
        value = safe_yaml.load(raw, MAX_EXPANDED_NODES)
    except safe_yaml.Refused as err:
        shown = raw if len(raw) <= 60 else f"{raw[:40]}..."  # thousands of brackets: the start
        raise ConfigError([f"--set {key}={shown}: {safe_yaml.problem_of(err)[1]}"]) from None
    except yaml.YAMLError as err:
        reason = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise ConfigError(
            [
                f"--set {text}: the value {raw!r} is not valid YAML ({reason}); quote it, e.g. "
                f"--set '{key}=\"{raw}\"'"
            ]
        ) from None
    node: Any = data
    loc: list[str | int] = []
    parts = key.split(".")
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if isinstance(node, list):
            ids = [s.get("id") if isinstance(s, dict) else None for s in node]
            if part in ids:
                index = ids.index(part)
            elif part.isdigit() and int(part) < len(node):
                index = int(part)
            else:
                raise ConfigError(
                    [f"--set {text}: no step {part!r} (steps: {', '.join(map(str, ids))})"]
                )
            loc.append(index)
            if last:
                node[index] = value
            else:
                node = node[index]
        elif isinstance(node, dict):
            loc.append(part)
            if last:
                node[part] = value
            else:
                node = node.setdefault(part, {})
        else:
            raise ConfigError([f"--set {text}: {format_loc(loc)} is not a mapping"])
    lines.set_by_override(tuple(loc), text)


def _tag_free(loc: Loc, data: Any) -> Loc:
    """Drop the tag pydantic inserts in locations inside a tagged union (``params.synth.facts``).

    The tag is the value of the discriminating key (``source: synth``), never a key of the data,
    so an element that is not a key here but is one of this mapping's values is that tag.
    """
    out: list[str | int] = []
    for part in loc:
        if isinstance(data, dict) and part not in data and part in data.values():
            continue
        out.append(part)
        if isinstance(data, dict):
            data = data.get(part)
        elif isinstance(data, list) and isinstance(part, int) and part < len(data):
            data = data[part]
        else:
            data = None
    return tuple(out)


_MESSAGES = {"extra_forbidden": "unknown key", "missing": "required key is missing"}


def _describe(
    err: ValidationError, prefix: Loc, data: Any, lines: _Lines, known: Iterable[str] = ()
) -> list[str]:
    """One ``file:line: key.path: reason`` per error; an unknown key among ``known`` keys
    (those of the mapping it sits in) names the nearest one."""
    problems = []
    for e in err.errors(include_url=False):
        loc = (*prefix, *_tag_free(tuple(e["loc"]), data))
        message = _MESSAGES.get(e["type"], e["msg"])
        message = re.sub(r"^Value error, ", "", message)
        if e["type"] == "extra_forbidden" and len(loc) == len(prefix) + 1:
            message += nearest(str(loc[-1]), known)
        problems.append(f"{lines.locate(loc)}: {format_loc(loc) or '(top level)'}: {message}")
    return problems


def _unchosen_variant(kind: StepKind, raw: Any) -> str | None:
    """Why the params of a kind with variants (build, probe, import, kg) name none of them, or
    None when they name one."""
    if kind.variants is None or not isinstance(raw, dict):
        return None
    registry, chosen = kind.variants.registry, raw.get(kind.variants.key)
    if isinstance(chosen, str) and chosen in registry:
        return None
    names = ", ".join(registry.names())
    if chosen is None:
        return f"required key is missing: the {registry.concept}, one of {names}"
    hint = nearest(str(chosen), registry.names())
    return f"unknown {registry.concept} {chosen!r}{hint}; one of {names}"


def _keys(kind: StepKind, raw: Any) -> list[str]:
    """The params keys a step of ``kind`` takes (of the variant ``raw`` names, for a family)."""
    model = kind.params
    if kind.variants is not None and isinstance(raw, dict):
        chosen = raw.get(kind.variants.key)
        if not isinstance(chosen, str) or chosen not in kind.variants.registry:
            return [kind.variants.key]
        model = kind.variants.get(chosen).params
        return [kind.variants.key, *model.model_fields]
    return list(model.model_fields)


def _refuse_untrusted_plugins(config: ExperimentConfig, lines: _Lines, trusted: bool) -> None:
    """A config's plugins are imported only with ``trusted`` (``--trust-plugins``) or when the
    user chose them for every command (``CHRONOPROBE_PLUGINS``, an installed plugin allowed).
    A plugin is Python code that runs with the user's rights, and a config is a file people
    send each other: reading one must not run code its reader did not choose to run (as
    Hugging Face's ``trust_remote_code``)."""
    chosen = user_plugins()
    untrusted = [m for m in config.plugins if plugin_module(m) not in chosen]
    if untrusted and not trusted:
        raise ConfigError(
            [
                f"{lines.locate(('plugins',))}: plugins: the config imports Python modules "
                f"({', '.join(map(repr, untrusted))}), which run code with your rights; if you "
                f"trust them, run it with --trust-plugins (or name them in {PLUGINS_ENV})"
            ]
        )


def _refuse_untrusted_cache(experiment: Experiment, lines: _Lines, trusted: bool) -> None:
    """A config's own ``cache_dir`` is used only with ``trusted`` (``--trust-cache-dir``), or
    when it is the user's cache anyway. The cache serves its entries as results this machine
    computed, and a config is a file people send each other: a cache folder shipped beside it
    would decide what the run reports, as a plugin decides what it runs."""
    folder = experiment.cache_root
    if trusted or experiment.config.cache_dir is None:
        return
    if folder.resolve() == default_cache_dir().resolve():
        return
    raise ConfigError(
        [
            f"{lines.locate(('cache_dir',))}: cache_dir: the config names a step cache of its "
            f"own ({folder}), whose entries would be served as your results; if you trust that "
            "folder, run it with --trust-cache-dir (or remove the line to use your own cache)"
        ]
    )


def _import_plugins(config: ExperimentConfig, lines: _Lines, folder: Path) -> list[str]:
    """Import the config's plugins, found also in ``folder`` (the config's) and the current
    directory; returns a line for each that cannot be imported."""
    problems = []
    for i, module in enumerate(config.plugins):
        problem = import_plugin(plugin_module(module), beside=folder)
        if problem is not None:
            problems.append(f"{lines.locate(('plugins', i))}: plugins[{i}]: {problem}")
    return problems


def _check_steps(
    config: ExperimentConfig, data: dict, base_dir: Path, lines: _Lines
) -> tuple[dict[str, BaseModel], dict[str, StepKind], list[str]]:
    params: dict[str, BaseModel] = {}
    kinds: dict[str, StepKind] = {}
    kind_of: dict[str, StepKind] = {}  # also of steps whose params are invalid
    problems: list[str] = []
    seen: list[str] = []
    for i, step in enumerate(config.steps):
        here = ("steps", i)
        if step.id in seen:
            where = lines.locate((*here, "id"))
            problems.append(f"{where}: steps[{i}].id: duplicate step id {step.id!r}")
        elif step.id.casefold() in (other.casefold() for other in seen):
            twin = next(other for other in seen if other.casefold() == step.id.casefold())
            problems.append(
                f"{lines.locate((*here, 'id'))}: steps[{i}].id: {step.id!r} differs from "
                f"{twin!r} only in case; on a file system that ignores case (macOS, Windows) "
                "they would share one folder"
            )
        for name, source in step.inputs.items():
            if source not in seen:
                loc = (*here, "inputs", name)
                why = "a later step" if source in [s.id for s in config.steps] else "no such step"
                earlier = ", ".join(seen) or "none"
                problems.append(
                    f"{lines.locate(loc)}: {format_loc(loc)}: {source!r} is {why}; "
                    f"inputs name earlier steps ({earlier})"
                )
            elif source in kind_of and not kind_of[source].cacheable:
                loc = (*here, "inputs", name)
                problems.append(
                    f"{lines.locate(loc)}: {format_loc(loc)}: {source!r} is a "
                    f"{kind_of[source].name} step, which reads the whole run and leaves no "
                    "outputs for another step to read"
                )
        seen.append(step.id)
        try:
            kind = kind_of[step.id] = get_kind(step.kind)
        except KeyError as err:
            problems.append(f"{lines.locate((*here, 'kind'))}: steps[{i}].kind: {err.args[0]}")
            continue
        try:
            step.inputs = rename_keys(
                step.inputs, _input_renames(kind), _located_warning(lines, (*here, "inputs"))
            )
        except UserError as err:
            problems.append(f"{lines.locate((*here, 'inputs'))}: steps[{i}].inputs: {err}")
            continue
        raw = data["steps"][i].get("params") or {}
        unchosen = _unchosen_variant(kind, raw)
        if unchosen:
            loc = (*here, "params", kind.variants.key)  # type: ignore[union-attr]
            problems.append(f"{lines.locate(loc)}: {format_loc(loc)}: {unchosen}")
            continue
        try:
            context = {"base_dir": base_dir, "renamed": _located_warning(lines, (*here, "params"))}
            params[step.id] = kind.params.model_validate(raw, context=context)
            kinds[step.id] = kind
        except ValidationError as err:
            problems += _describe(err, (*here, "params"), raw, lines, _keys(kind, raw))
            continue
        for problem in kind.problems(params[step.id], step.inputs):
            key = problem.split(": ", 1)[0]
            loc = (*here, *key.split("."))
            problems.append(f"{lines.locate(loc)}: steps[{i}].{problem}")
    return params, kinds, problems


def _input_renames(kind: StepKind) -> dict[str, str]:
    return {i.formerly: i.name for i in kind.inputs or () if i.formerly}


def _located_warning(lines: _Lines, where: Loc):
    """Tells that an old key under ``where`` was used, naming its line (or its ``--set``)."""

    def warn(old: str, new: str) -> None:
        loc = (*where, old)
        tell_user(f"{lines.locate(loc)}: {deprecated(format_loc(loc), new)}")

    return warn


def load_experiment(
    path: str | Path,
    overrides: Sequence[str] = (),
    *,
    trust_plugins: bool = False,
    seeds: Sequence[int] | None = None,
    trust_cache_dir: bool = False,
) -> Experiment:
    """Read, override, validate; raise :class:`ConfigError` listing every problem found.

    The config's ``plugins:`` are imported only with ``trust_plugins`` (or when named in
    ``CHRONOPROBE_PLUGINS``); otherwise a config that has any is refused, before any runs.
    ``seeds`` (``run --seeds``) replaces the config's own ``seeds``. A ``cache_dir`` other
    than the user's cache is refused without ``trust_cache_dir``."""
    path = Path(path)
    data, root = _parse_yaml(path)
    lines = _Lines(path, root)
    if not isinstance(data, dict):
        raise ConfigError([f"{path.name}:1: expected a mapping with name, seed and steps"])
    for text in overrides:
        _apply_override(data, text, lines)
    if seeds is not None:
        data["seeds"] = list(seeds)
        lines.set_by_option(("seeds",), "--seeds")
    try:
        config = ExperimentConfig.model_validate(data)
    except ValidationError as err:
        raise ConfigError(_describe(err, (), data, lines, ExperimentConfig.model_fields)) from None
    _refuse_untrusted_plugins(config, lines, trust_plugins)
    problems = _import_plugins(config, lines, path.parent)
    params, kinds, step_problems = _check_steps(config, data, path.parent, lines)
    if config.seeds and not step_problems:
        for loc, reason in seed_problems(config.steps, kinds, params, config.seeds):
            step_problems.append(f"{lines.locate(loc)}: {format_loc(loc)}: {reason}")
    if problems or step_problems:
        raise ConfigError(problems + step_problems)
    experiment = Experiment(path=path, config=config, params=params, kinds=kinds)
    _refuse_untrusted_cache(experiment, lines, trust_cache_dir)
    return experiment
