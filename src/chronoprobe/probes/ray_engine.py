"""The ``probe`` operation on Ray (``--engine ray``): models held by Ray actors, one device each.

Each actor (a :class:`ModelWorker`) holds one model at a time on one GPU (Ray hands each its
own; on a cluster without GPUs, one CPU). With several models, each model goes to a group of
actors as one is free, so a model series spreads one model per actor; with fewer models than
actors, each model's rows are cut into shards shared by its group's actors. Shards are the
runner's (:class:`~chronoprobe.probes.runner.ShardedProbe`): each finished shard is a file, so a
killed probe resumes at its missing shards, and the answers are gathered in input order, the
same rows a single process writes.
"""

from __future__ import annotations

import gc
import math
import queue
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple

from chronoprobe.jsonl import read_jsonl
from chronoprobe.probes.runner import SHARD_ROWS, ShardedProbe
from chronoprobe.probes.view import VIEWS, View


class _Named(NamedTuple):
    """What metrics.json names of a model held by an actor."""

    name: str
    family: str


def _own_params(view: View, params: dict) -> Any:
    """The view's own params model from a step's params (which also name the view)."""
    return view.params.model_validate(
        {k: v for k, v in params.items() if k in view.params.model_fields}
    )


class ModelWorker:
    """A Ray actor's state: the model of the last spec it was asked for, loaded once.

    ``load`` holds :func:`~chronoprobe.models.load_model`'s options, and ``answers_in``: the
    folder of the request store to answer from and into (the command's step cache), or None,
    with ``answer_key`` (what beside the spec keys the answers).
    """

    def __init__(self) -> None:
        self.spec: str | None = None
        self.model = None

    def _model(self, spec: str, load: dict):
        if spec != self.spec:
            if self.model is not None and hasattr(self.model, "store"):
                self.model.store.close()
            self.model = self.spec = None
            gc.collect()
            from chronoprobe.models import load_model

            options = dict(load)
            answers_in = options.pop("answers_in", None)
            answer_key = options.pop("answer_key", None)
            model = load_model(spec, **options)
            if answers_in is not None:
                from chronoprobe.models.request_cache import answer_cache

                model = answer_cache(spec, model, Path(answers_in), answer_key)
            self.model, self.spec = model, spec
        return self.model

    def load(self, spec: str, load: dict) -> None:
        self._model(spec, load)

    def prepare(self, spec: str, load: dict, view_name: str, params: dict, rows: list) -> tuple:
        """The params to probe this model with (per-model options, and what was said about
        them), its name and family, and the warnings about ``rows``."""
        model, view, said = self._model(spec, load), VIEWS.get(view_name), []
        mine = _own_params(view, params)
        if view.for_model:
            mine = view.for_model(mine, model, said.append)
        warnings = view.warnings(model, rows, mine) if view.warnings else []
        return mine.model_dump(mode="json"), _Named(model.name, model.family), warnings, said

    def predict(self, spec: str, load: dict, view_name: str, params: dict, rows: list) -> list:
        view = VIEWS.get(view_name)
        return view.predict(self._model(spec, load), rows, _own_params(view, params), None)


class RayProbes:
    """The models of one ``probe`` step, answered by Ray actors; :meth:`start` hands back one
    future per model, each resolving to what the local ``_probe_one`` returns."""

    def __init__(self, ctx, view: View, params: Any, models: list[tuple[str, str]]) -> None:
        from chronoprobe.core.ray_session import connect

        self.ctx, self.view, self.params, self.models = ctx, view, params, models
        self.ray = ray = connect(params.address)
        gpus = int(ray.cluster_resources().get("GPU", 0))
        workers = params.workers or max(1, gpus)
        resources = {"num_gpus": 1} if gpus else {"num_cpus": 1}
        actor = ray.remote(**resources)(ModelWorker)
        self.actors = [actor.remote() for _ in range(workers)]
        self.executor: ThreadPoolExecutor | None = None

    def start(self, todo: list[int], data: Path, rows_file: Path, area: Path) -> dict[int, Future]:
        """Probe the models numbered ``todo``; each reads ``data`` and works under ``area``."""
        groups = min(len(todo), len(self.actors)) or 1
        free: queue.Queue = queue.Queue()
        for first in range(groups):
            free.put(self.actors[first::groups])
        self.executor = ThreadPoolExecutor(groups, thread_name_prefix="ray-probe")

        def probe(index: int):
            group = free.get()
            try:
                return self._probe(index, group, data, rows_file, area)
            finally:
                free.put(group)

        return {index: self.executor.submit(probe, index) for index in todo}

    def close(self) -> None:
        if self.executor is not None:
            self.executor.shutdown(wait=False, cancel_futures=True)
        for actor in self.actors:
            self.ray.kill(actor)

    def _probe(self, index: int, group: list, data: Path, rows_file: Path, area: Path) -> tuple:
        ray, view, params = self.ray, self.view, self.params
        name, spec = self.models[index]
        load = params.load_options()
        if params.reuse_answers:
            from chronoprobe.core.cache_dir import default_cache_dir

            load["answers_in"] = str(default_cache_dir())
            load["answer_key"] = params.answer_key()
        every = list(view.read(rows_file))[: params.limit]  # warnings count over the rows file
        dumped = params.model_dump(mode="json")
        prepared = group[0].prepare.remote(spec, load, view.name, dumped, every)
        for actor in group[1:]:  # the others load the model meanwhile
            actor.load.remote(spec, load)
        own, model, warnings, said = ray.get(prepared)
        for line in said:
            self.ctx.log.info(line)
        mine = type(params).model_validate({**dumped, **own})
        limit = None if view.drift_rows else params.limit  # drift rows were limited already
        rows = len(list(view.read(data))[:limit])
        # about four shards per actor, each of at least a batch
        shard_rows = min(SHARD_ROWS, max(params.batch_size, math.ceil(rows / (4 * len(group)))))
        work = area / "runs" / f"{index:05d}"
        probe = ShardedProbe.start(
            data, model.name, view.name, work, mine, shard_rows=shard_rows, limit=limit
        )
        mine_dumped = mine.model_dump(mode="json")
        tasks = {
            group[n % len(group)].predict.remote(
                spec, load, view.name, mine_dumped, probe.chunk(n)
            ): n
            for n in probe.missing()
        }
        with self.ctx.progress_task(f"{name} ({view.name})") as progress:
            done = (probe.shards - len(tasks)) * shard_rows
            self._gather(probe, tasks, lambda size: progress(min(rows, done + size), rows))
        metrics = probe.finish(model, warnings)
        answers = [*read_jsonl(work / "predictions.jsonl"), *read_jsonl(work / "skipped.jsonl")]
        return (
            answers,
            mine,
            {"rows": metrics["rows"], "family": model.family, "warnings": warnings},
        )

    def _gather(self, probe: ShardedProbe, tasks: dict, progress: Callable[[int], None]) -> None:
        """Write each shard as its task finishes; ``progress`` is told the rows answered."""
        answered = 0
        while tasks:
            ready, _ = self.ray.wait(list(tasks), num_returns=1)
            for task in ready:
                number = tasks.pop(task)
                probe.write(number, self.ray.get(task))
                answered += len(probe.chunk(number))
            progress(answered)
