"""Where a model spec's weights are on this machine, for the tools that load them by path.

``transformers serve``, lm-evaluation-harness and any ``from_pretrained`` take a directory or
a hub id. A ``.gguf`` file (``package:smollm2`` is one) is converted once into a
``save_pretrained`` directory of the models cache: the same weights chronoprobe loads for that
spec, so another tool asked with that directory answers as chronoprobe does.
"""

from __future__ import annotations

from pathlib import Path

from chronoprobe.errors import UserError
from chronoprobe.models.spec import ModelSpec

SERVED_HINT = (
    "an openai: spec names a model behind a server, whose weights are the server's; name the "
    "weights instead (a directory, a .gguf file, package:smollm2 or a hub id)"
)


def local_spec(text: str) -> ModelSpec:
    """``text`` parsed as a spec whose weights can be named: not a served model, and, for a
    hub id, one in the local Hugging Face cache or on a hub that answers (told at once)."""
    from chronoprobe.core.hub import missing_hub_model
    from chronoprobe.models.spec import parse_spec

    spec = parse_spec(text)
    if getattr(spec, "served", False):
        raise UserError(f"{text!r}: {SERVED_HINT}")
    missing = missing_hub_model(spec.body) if spec.scheme == "hub" else None
    if missing:
        raise UserError(missing)
    return spec


def weights_location(text: str) -> str:
    """What ``from_pretrained`` loads the spec ``text`` from: a directory (a GGUF file's
    conversion, made here on first use) or a hub id as given."""
    from chronoprobe.models.local import converted_gguf

    source = local_spec(text).source()
    if source.gguf_file:
        source = converted_gguf(source)
    if Path(source.location).is_dir():
        return str(Path(source.location).resolve())
    return source.location


def weights_directory(text: str) -> Path:
    """The one directory holding the spec's weights: a hub id's snapshot in the local Hugging
    Face cache (downloaded first where the hub answers), any other spec as
    :func:`weights_location` gives it."""
    from chronoprobe.core.hub import load_options, unreachable_hint

    location = weights_location(text)
    if Path(location).is_dir():
        return Path(location)
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HFValidationError, LocalEntryNotFoundError

    try:
        return Path(snapshot_download(location, **load_options(location)))
    except (LocalEntryNotFoundError, HFValidationError, OSError) as err:
        hint = unreachable_hint(location).removesuffix("; ")
        raise UserError(f"{text}: {hint or str(err).splitlines()[0]}") from None
