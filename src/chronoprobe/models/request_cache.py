"""Answers to requests, kept on disk: a second view or a re-run over the same requests costs
nothing.

A served model (:mod:`chronoprobe.models.served`) is keyed by its server and name, and hands
each answer over as it arrives, so that it is stored at once: a run killed halfway has paid
for the answers it got, and its re-run asks only for the others.

:class:`CachedModel` wraps an adapter. Each request's answer is stored under a key made of the
model's fingerprint (its spec's: the content of its weight files, or its server; its family,
device type and dtype), the method and its
options (``top_k``, a restricted vocabulary...) and the request itself; a call answers what is
stored and hands only the rest to the model, in one batch, keeping the caller's order. Answers
are stored as JSON (the request module's dataclasses, by name), never pickled. The store is one
SQLite file in the step cache's folder, safe to share between runs.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from chronoprobe.models import requests as request_types
from chronoprobe.models.capabilities import AnswersAsTheyCome, CountsReused
from chronoprobe.models.spec import LoadOptions, ModelSpec

STORE_NAME = "requests.sqlite"


def model_fingerprint(spec: ModelSpec, model: Any, options: LoadOptions | None = None) -> str:
    """What decides a model's answers: its spec's fingerprint (the content of its weight files,
    or a served model's server and name, and the options that pick other weights or code),
    and, for a model loaded here, its family, device type and dtype."""
    from chronoprobe.models.base import LanguageModel

    facts: list = [spec.fingerprint(options), model.family]
    if isinstance(model, LanguageModel):
        parameter = next(model.model.parameters(), None)
        facts += [model.device.type, str(getattr(parameter, "dtype", ""))]
    return hashlib.sha256(json.dumps(facts).encode()).hexdigest()


def _encode(value: Any) -> Any:
    if dataclasses.is_dataclass(value):
        fields = {f.name: _encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return {"__type__": type(value).__name__, **fields}
    if isinstance(value, list | tuple):
        return [_encode(v) for v in value]
    return value


def _decode(value: Any) -> Any:
    if isinstance(value, list):
        return [_decode(v) for v in value]
    if isinstance(value, dict) and "__type__" in value:
        kind = getattr(request_types, value["__type__"])
        return kind(**{k: _decode(v) for k, v in value.items() if k != "__type__"})
    return value


class RequestStore:
    """key -> JSON answer, in one SQLite file."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.connection = sqlite3.connect(path, timeout=60)
        self.connection.execute("pragma journal_mode=wal")
        # a commit is in the log before the call returns, so a killed process loses nothing;
        # syncing the log to the disk at every answer (a served run commits each one) would
        # cost milliseconds an answer, and guards only against the machine itself going down
        self.connection.execute("pragma synchronous=normal")
        self.connection.execute(
            "create table if not exists answers (key text primary key, value text not null)"
        )

    def get(self, keys: Sequence[str]) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for start in range(0, len(keys), 500):
            chunk = list(keys[start : start + 500])
            marks = ",".join("?" * len(chunk))
            query = f"select key, value from answers where key in ({marks})"
            for key, value in self.connection.execute(query, chunk):
                found[key] = _decode(json.loads(value))
        return found

    def put(self, items: dict[str, Any]) -> None:
        rows = [(k, json.dumps(_encode(v), separators=(",", ":"))) for k, v in items.items()]
        with self.connection:
            self.connection.executemany("insert or replace into answers values (?, ?)", rows)

    def close(self) -> None:
        self.connection.close()


def answer_cache(
    spec: ModelSpec, model: Any, folder: Path, options: LoadOptions | None = None
) -> CachedModel:
    """``model`` answering from, and into, the request store in ``folder`` (the step cache's
    folder): processes that share the folder share the answers (keyed by
    :func:`model_fingerprint`)."""
    fingerprint = model_fingerprint(spec, model, options)
    return CachedModel(model, fingerprint, RequestStore(folder / STORE_NAME))


class CachedModel:
    """An adapter whose ``rank``, ``score``, ``generate`` and ``complete`` answers come from
    ``store`` when it has them; everything else is the adapter's own."""

    CACHED = ("rank", "score", "generate", "complete")

    def __init__(self, model: Any, fingerprint: str, store: RequestStore) -> None:
        self.model, self.fingerprint, self.store = model, fingerprint, store
        self.hits = self.misses = 0

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.model, name)
        if name not in self.CACHED:
            return method
        return lambda requests, *args, **options: self._answer(
            name, method, requests, args, options
        )

    def _key(self, method: str, request: Any, options: str) -> str:
        text = f"{self.fingerprint}\n{method}\n{options}\n{request!r}"
        return hashlib.sha256(text.encode()).hexdigest()

    def _answer(
        self,
        method: str,
        compute: Callable[..., list[Any]],
        requests: Sequence[Any],
        args: tuple,
        options: dict[str, Any],
    ) -> list[Any]:
        progress = options.pop("progress", None)
        settings = json.dumps([list(args), sorted(options.items())], default=list)
        keys = [self._key(method, request, settings) for request in requests]
        found = self.store.get(keys)
        todo = [i for i, key in enumerate(keys) if key not in found]
        self.hits += len(requests) - len(todo)
        self.misses += len(todo)
        if isinstance(self.model, CountsReused) and len(todo) < len(requests):
            self.model.reused([found[key] for key in keys if key in found])
        if todo and isinstance(self.model, AnswersAsTheyCome) and self.model.answers_as_they_come:
            # each answer is stored the moment it arrives: a killed run loses none of them
            def keep(index: int, answer: Any) -> None:
                self.store.put({keys[todo[index]]: answer})
                found[keys[todo[index]]] = answer

            options = {**options, "keep": keep}
            compute([requests[i] for i in todo], *args, progress=progress, **options)
        elif todo:
            answers = compute([requests[i] for i in todo], *args, progress=progress, **options)
            new = {keys[i]: answer for i, answer in zip(todo, answers, strict=True)}
            self.store.put(new)
            found.update(new)
        elif progress:
            progress(len(requests), len(requests))
        return [found[key] for key in keys]
