"""What a params field says beyond its type: registry choices and command-line spelling.

Params models are pydantic models that the run engine validates from YAML and the command line
builds its options from. Two markers, used inside ``Annotated``, carry what neither can guess:

- ``Choice(registry)``: the value names an entry of a registry (a view, a TKG model...); it is
  validated against the registry's names, with the nearest one suggested, and the command line
  offers the names as choices;
- ``Cli(argument=True)`` / ``Cli(short="-m")`` / ``Cli(commas=False)``: a positional argument,
  a short option name, a list option whose values may hold commas (every other list option of
  names, ids or numbers takes ``--relations P39,P54`` as well as the option repeated).

Field ``description``s are the options' help texts; defaults are the options' defaults.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    model_validator,
)
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from chronoprobe.core.devices import DEVICE_HELP
from chronoprobe.errors import UserError
from chronoprobe.registry import Registry, nearest
from chronoprobe.renames import renaming_validator


@dataclass(frozen=True)
class Cli:
    argument: bool = False  # a positional argument instead of an option
    short: str | None = None  # e.g. "-m"
    commas: bool = True  # a list option of names also splits at commas (--relations P39,P54)


# the type of a validation error whose value must not be repeated in the message (a key given
# where the name of the variable holding it belongs)
NOT_ECHOED = "not_echoed"


def refused(
    err: ValidationError, values: dict[str, Any], name: Callable[[str], str], echo: bool
) -> UserError:
    """One line for every error of ``err`` (validating ``values``), each after the field's
    ``name`` as the caller's user spells it. With ``echo``, a value that may be repeated is
    quoted after its error (``(got 'x')``); without, the value given is in no message, not
    even where a check quoted it (a key passed in the wrong option stays unsaid)."""
    lines = []
    for error in err.errors(include_url=False):
        loc = [str(p) for p in error["loc"] if p in values or isinstance(p, int)]
        message = error["msg"].removeprefix("Value error, ")
        given = error.get("input")
        plain = isinstance(given, str | int | float) and not isinstance(given, bool)
        if echo and plain and error["type"] != NOT_ECHOED:
            message += f" (got {given!r})"
        elif not echo and plain and str(given):
            message = message.replace(repr(given), "the value given")
            if len(str(given)) >= 4:  # shorter: a word of the message, not what was given
                message = message.replace(str(given), "the value given")
        lines.append(f"{name(loc[0])}: {message}" if loc else message)
    return UserError("; ".join(lines))


@dataclass(frozen=True)
class Choice:
    registry: Registry[Any]

    def __call__(self, value: str) -> str:
        if value not in self.registry:
            names = self.registry.names()
            raise UserError(
                f"unknown {self.registry.concept} {value!r}{nearest(value, names)}; "
                f"choose one of: {', '.join(names)}"
            )
        return value


def choice_of(registry: Registry[Any]) -> Any:
    """``Annotated[str, ...]`` for a field whose value is a name in ``registry``."""
    marker = Choice(registry)
    return Annotated[str, marker, AfterValidator(marker)]


class Params(BaseModel):
    """Base of every operation's params: unknown keys are errors, not silently ignored.

    A params class that groups options shared by many commands names its ``panel``: its
    fields are listed under that heading in each command's --help (see :func:`panel_of`).

    A class that renamed a field declares its old name for one release in ``renamed: ClassVar
    [dict[str, str]] = {"old_name": "new_name"}`` (see :mod:`chronoprobe.renames`)."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _old_names(cls, data: Any, info: ValidationInfo) -> Any:
        return renaming_validator(cls, data, info.context)


def panel_of(model: type[BaseModel], name: str) -> str | None:
    """The --help panel of the field ``name``: the ``panel`` of the params class that declares
    it, else of the nearest class deriving from that one which names a panel (``device``,
    declared for every step that runs a model, is a model-loading option of a probe), else
    None (the command's own options)."""
    classes = model.__mro__
    owner = next(c for c in classes if name in inspect.get_annotations(c))
    below = [c for c in classes[: classes.index(owner) + 1] if issubclass(c, owner)]
    return next((c.__dict__["panel"] for c in reversed(below) if "panel" in c.__dict__), None)


def _existing_path(value: Path, info: ValidationInfo) -> Path:
    """Resolve relative to the config's folder, so a config means the same from any directory."""
    base = (info.context or {}).get("base_dir", Path.cwd())
    path = value if value.is_absolute() else Path(base) / value
    if not path.exists():
        raise UserError(f"no such file or directory: {path}")
    resolved = path.resolve()
    # a pipe (<(zcat dump.json.gz), /dev/stdin) resolves to a name that is no file: keep its own
    return resolved if resolved.exists() else path.absolute()


# A params field that names an input file: it must exist when the config is loaded.
ExistingPath = Annotated[Path, AfterValidator(_existing_path)]


# numpy's generators take seeds in [0, 2**32): a seed outside it passes a config and fails the
# step that draws with it, so it is refused where the config or the options load. A bool, a
# string or a float (`true`, "1", 1.0 in YAML) is refused too, not turned into a seed.
SEED_RANGE = {"strict": True, "ge": 0, "lt": 2**32}

# An experiment's `seed` and each of its `seeds`.
Seed = Annotated[int, Field(**SEED_RANGE)]


def seed_field(what: str) -> Any:
    """The ``seed`` param of a step that draws at random: None means the run's seed (0 for a
    single command), which ``StepContext.seed`` holds; else a :data:`Seed`."""
    return Field(
        None,
        description=f"Seed of {what} (default: the run's seed; 0 on the command line).",
        **SEED_RANGE,
    )


class DeviceParams(Params):
    """Where a step runs its model: every step that runs or trains one takes these."""

    device: str = Field("auto", description=DEVICE_HELP)


def _year_as_text(value: Any) -> Any:
    """A period written as a number in YAML (``first: 2015``) is that year."""
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


# A period's name ("2015", "2019-Q1", "2019-07"); a year may be given as a number.
PeriodName = Annotated[str, BeforeValidator(_year_as_text)]


class PeriodRange(Params):
    """A run of periods, ``first`` to ``last`` inclusive, by ``granularity``: what a drift set is
    built over and a model series is trained over. Checked when the params load (a bad period
    or a reversed range fails the config before its first step)."""

    first: PeriodName = Field(description="First period, e.g. 2015, 2019-Q1, 2019-07.")
    last: PeriodName = Field(description="Last period (inclusive).")
    granularity: Literal["year", "quarter", "month"] = Field(
        "year", description="Period length: year, quarter or month."
    )
    _periods: tuple[tuple[str, str, str], tuple] | None = PrivateAttr(None)

    @model_validator(mode="after")
    def _check_periods(self) -> PeriodRange:
        self.periods()
        return self

    def periods(self) -> list:
        """The periods, in order (computed once per range)."""
        from chronoprobe.time import Granularity, periods_between

        key = (self.first, self.last, self.granularity)
        if self._periods is None or self._periods[0] != key:
            found = periods_between(self.first, self.last, Granularity[self.granularity.upper()])
            self._periods = (key, tuple(found))
        return list(self._periods[1])


# --- what a field says, as the command line reads it ---------------------------------------


def unwrap(annotation: Any) -> tuple[Any, list[Any]]:
    """The bare type of a field and the metadata of its ``Annotated`` layers (None removed)."""
    metadata: list[Any] = []
    while True:
        origin = get_origin(annotation)
        if origin is Annotated:
            annotation, *extra = get_args(annotation)
            metadata.extend(extra)
        elif origin in (Union, types.UnionType):
            members = [a for a in get_args(annotation) if a is not type(None)]
            if len(members) != 1:
                raise TypeError(f"a command option cannot have the type {annotation!r}")
            annotation = members[0]
        else:
            return annotation, metadata


def splits_commas(field: FieldInfo) -> bool:
    """Whether a list option also splits its values at commas: lists of names, ids and numbers
    do (``--relations P39,P54``); lists of paths and fields marked ``Cli(commas=False)`` do not."""
    annotation, _ = unwrap(field.annotation)
    if get_origin(annotation) is not list or not cli_of(field).commas:
        return False
    item, _ = unwrap(get_args(annotation)[0])
    return not (isinstance(item, type) and issubclass(item, Path))


def field_default(field: FieldInfo) -> Any:
    if field.default_factory is not None:
        return field.default_factory()  # type: ignore[call-arg]
    return ... if field.default is PydanticUndefined else field.default


def option_flag(name: str) -> str:
    """The command-line option of a params field or an input, as a user types it:
    ``gap_first`` -> ``--gap-first``. Messages, help and suggested commands spell an option
    with it, never the field's own name, which is what a config writes."""
    return "--" + name.replace("_", "-")


def cli_of(field: FieldInfo) -> Cli:
    _, metadata = unwrap(field.annotation)
    return next((m for m in [*metadata, *field.metadata] if isinstance(m, Cli)), Cli())
