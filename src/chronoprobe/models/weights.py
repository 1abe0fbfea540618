"""Where a model spec's weights are on this machine, for the tools that load them by path.

``transformers serve``, lm-evaluation-harness and any ``from_pretrained`` take a directory or
a hub id. A ``.gguf`` file (``package:smollm2`` is one) is converted once into a
``save_pretrained`` directory of the models cache: the same weights chronoprobe loads for that
spec, so another tool asked with that directory answers as chronoprobe does.
"""

from __future__ import annotations

from pathlib import Path

SERVED_HINT = (
    "an openai: spec names a model behind a server, whose weights are the server's; name the "
    "weights instead (a directory, a .gguf file, package:smollm2 or a hub id)"
)


def weights_location(spec: str) -> str:
    """What ``from_pretrained`` loads ``spec`` from: a directory (a GGUF file's conversion,
    made here on first use) or a hub id as given."""
    from chronoprobe.core.hub import missing_hub_model
    from chronoprobe.models.served import is_served

    if is_served(spec):
        raise ValueError(f"{spec!r}: {SERVED_HINT}")
    missing = missing_hub_model(spec)  # before torch is imported: at once
    if missing:
        raise ValueError(missing)
    from chronoprobe.models.spec import _converted_gguf, resolve_spec

    source = resolve_spec(spec)
    if source.gguf_file:
        source = _converted_gguf(source)
    if Path(source.location).is_dir():
        return str(Path(source.location).resolve())
    return source.location


def weights_directory(spec: str) -> Path:
    """The one directory holding ``spec``'s weights: a hub id's snapshot in the local Hugging
    Face cache (downloaded first where the hub answers), any other spec as
    :func:`weights_location` gives it."""
    from chronoprobe.core.hub import is_hub_id, load_options, unreachable_hint

    location = weights_location(spec)
    if not is_hub_id(location):
        return Path(location)
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HFValidationError, LocalEntryNotFoundError

    try:
        return Path(snapshot_download(location, **load_options(location)))
    except (LocalEntryNotFoundError, HFValidationError, OSError) as err:
        hint = unreachable_hint(location).removesuffix("; ")
        raise ValueError(f"{spec}: {hint or str(err).splitlines()[0]}") from None
