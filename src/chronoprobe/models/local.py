"""Models loaded in this process by transformers: the ``package``, ``gguf``, ``directory`` and
``hub`` spec schemes (:mod:`chronoprobe.models.spec`).

Each resolves to a directory or hub id (plus a GGUF file name), then one loading path picks the
family from the config (or is told it), loads weights with ``trust_remote_code`` off (unless
asked) and wraps them in that family's adapter. GGUF weights are converted once (de-quantizing
takes tens of seconds) into a ``save_pretrained`` directory under the chronoprobe cache, which
later loads read in about a second.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import pickle
import shutil
from pathlib import Path
from typing import Any

from chronoprobe.errors import UserError
from chronoprobe.inputs import file_identity
from chronoprobe.models.spec import (
    PACKAGES,
    LoadOptions,
    ModelSource,
    ModelSpec,
    models_dir,
)


def weights_at(path: Path, missing: str) -> ModelSource:
    """Weights as ``from_pretrained`` gets them: a folder as itself, a file (GGUF) as its
    folder and name; ``missing`` is the error where there is neither."""
    if path.is_dir():
        return ModelSource(str(path))
    if not path.is_file():
        raise FileNotFoundError(missing)
    return ModelSource(str(path.parent), path.name)


class _Transformers(ModelSpec):
    """A spec whose weights transformers loads here."""

    def load(self, options: LoadOptions) -> Any:
        return load_transformers(self, self.source(), options)


class PackageSpec(_Transformers):
    """``package:NAME``: weights a Python package ships (``package:smollm2``); a bare ``NAME``
    of :data:`~chronoprobe.models.spec.PACKAGES` that is no path means the same."""

    scheme = "package"

    @classmethod
    def claims(cls, text: str) -> bool:
        return text in PACKAGES and not Path(text).exists()

    def check(self) -> None:
        if self.body not in PACKAGES:
            known = ", ".join(PACKAGES)
            raise UserError(f"unknown package weights {self.body!r}; known: {known}")

    def locate(self) -> ModelSource:
        path = PACKAGES[self.body].path()
        return weights_at(path, f"{path}: the package is installed but its weights are missing")


class GGUFSpec(_Transformers):
    """A ``.gguf`` file: converted once to a ``save_pretrained`` copy, then loaded from it."""

    scheme = "gguf"

    @classmethod
    def claims(cls, text: str) -> bool:
        path = Path(text).expanduser()
        return path.suffix == ".gguf" and path.is_file()

    def locate(self) -> ModelSource:
        return weights_at(Path(self.body).expanduser(), f"{self.body}: no such .gguf file")


class DirectorySpec(_Transformers):
    """A local ``save_pretrained`` directory."""

    scheme = "directory"

    @classmethod
    def claims(cls, text: str) -> bool:
        return Path(text).expanduser().exists() or text.startswith((".", "/", "~"))

    def check(self) -> None:
        if not Path(self.body).expanduser().exists():
            raise FileNotFoundError(f"{self.body}: no such model directory or .gguf file")

    def locate(self) -> ModelSource:
        path = Path(self.body).expanduser()
        if path.is_dir():
            if not (path / "config.json").is_file():
                raise UserError(
                    f"{path}: not a model directory (no config.json from save_pretrained)"
                )
            return ModelSource(str(path))
        if path.is_file():
            raise UserError(
                f"{self.body}: a file, not a model directory or a .gguf file (the weights of "
                "a save_pretrained directory load from the directory)"
            )
        raise FileNotFoundError(f"{self.body}: no such model directory or .gguf file")


class HubSpec(_Transformers):
    """A Hugging Face hub id (``roberta-base``, ``HuggingFaceTB/SmolLM2-135M``): its answers
    are decided by the id and the revision asked for."""

    scheme = "hub"

    def weight_files(self) -> list[Path]:
        return []

    def identity(self, options: LoadOptions | None) -> list:
        return [self.body, options.revision if options else None]


def converted_gguf(source: ModelSource) -> ModelSource:
    """A save_pretrained copy of GGUF weights, made on first use and reused after."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf = Path(source.location) / str(source.gguf_file)
    identity = [str(gguf.resolve()), *file_identity(gguf)]
    key = hashlib.sha256(json.dumps(identity).encode()).hexdigest()
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
    raise UserError(
        f"cannot tell whether {config.model_type!r} is a masked or causal LM; pass the family"
    )


def weights_problem(err: Exception) -> str | None:
    """Why weights did not load, for the errors that say the files are bad; None for others.

    Weights load from safetensors, which holds tensors only, or from ``pytorch_model.bin``
    through torch's weights-only unpickler, which builds tensors and plain containers and
    refuses anything else (a pickle that would run code) before it runs.
    """
    from safetensors import SafetensorError

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
        raise UserError(
            f"model {spec!r} is a {told} model ({kind}), not {family}: read as a {family} model "
            f"its answers would mean nothing; leave out --family, or pass --family {told}"
        )
    return told


def dtypes() -> dict[str, Any]:
    """--dtype's names; auto (None) is bf16 on a GPU and fp32 on the CPU."""
    import torch

    return {
        "auto": None,
        "float32": torch.float32,
        "bfloat16": torch.bfloat16,
        "float16": torch.float16,
    }


def adapter_class(family: str) -> type:
    from chronoprobe.models.registry import ADAPTERS

    try:
        return ADAPTERS.get(family)
    except KeyError as err:
        raise UserError(err.args[0]) from None


def load_transformers(spec: ModelSpec, source: ModelSource, options: LoadOptions) -> Any:
    """The adapter of weights transformers loads from ``source`` (see ``load_model``)."""
    import torch
    from safetensors import SafetensorError
    from transformers import AutoConfig, AutoTokenizer

    from chronoprobe.core.devices import resolve_device
    from chronoprobe.core.hub import is_hub_id, load_options, unreachable_hint

    if options.revision is not None and not is_hub_id(source.location):
        raise UserError(
            f"--revision {options.revision}: model {spec.text!r} is a local one; a revision "
            "picks a branch, tag or commit of a Hugging Face model"
        )
    if source.gguf_file:
        source = converted_gguf(source)
    target = resolve_device(options.device)
    hub = {
        **load_options(source.location),
        "revision": options.revision,
        "trust_remote_code": options.trust_remote_code,
    }
    dtype = dtypes()[options.dtype] if isinstance(options.dtype, str) else options.dtype
    try:
        config = AutoConfig.from_pretrained(source.location, **hub)
        family = checked_family(spec.text, config, options.family)
        cls = adapter_class(family)
        auto = getattr(importlib.import_module("transformers"), cls.auto_class)
        model = auto.from_pretrained(
            source.location,
            dtype=dtype or (torch.bfloat16 if target.type == "cuda" else torch.float32),
            device_map=options.device_map,
            **hub,
        )
        tokenizer = AutoTokenizer.from_pretrained(source.location, **hub)
    except (SafetensorError, pickle.UnpicklingError, EOFError, RuntimeError) as err:
        problem = weights_problem(err)
        if problem is None:
            raise
        raise UserError(f"cannot load model {spec.text!r}: {problem}") from None
    except OSError as err:
        if Path(source.location).is_dir():  # local files: the hub has nothing to do with it
            first = str(err).splitlines()[0] if str(err) else type(err).__name__
            raise UserError(f"cannot load model {spec.text!r}: {first}") from None
        hint = unreachable_hint(source.location)
        detail = hint or f"{err}; "
        raise UserError(
            f"cannot load model {spec.text!r}: {detail}offline, pass a local directory or "
            f"package:{next(iter(PACKAGES))}"
        ) from err
    if options.device_map is None:
        model = model.to(target)
    return cls(model, tokenizer, batch_size=options.batch_size, name=spec.text)
