"""The ``probe`` operation on Ray (``--engine ray``): models held by Ray actors, one device each.

Each actor (a :class:`ModelWorker`) holds one model at a time on one GPU (Ray hands each its
own; on a cluster without GPUs, one CPU). With several models, each model goes to a group of
actors as one is free, so a model series spreads one model per actor; with fewer models than
actors, each model's rows are cut into shards shared by its group's actors. The shards are the
step's own (:class:`~chronoprobe.probes.answering.ModelShards`), written here as each comes
back: a killed probe resumes at its missing shards, and the answers are the rows a single
process writes.
"""

from __future__ import annotations

import gc
import queue
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from chronoprobe.models.spec import LoadOptions, ModelSpec
from chronoprobe.probes.answering import (
    ModelShards,
    ProbeRows,
    model_record,
    prepared,
    ray_shard_rows,
)
from chronoprobe.probes.view import View


class ModelWorker:
    """A Ray actor's state: the model of the last spec it was asked for, loaded once, answering
    from the request store in ``answers_in`` (the command's step cache) when that is given."""

    def __init__(self) -> None:
        self.spec: ModelSpec | None = None
        self.model = None

    def _model(self, spec: ModelSpec, options: LoadOptions, answers_in: str | None):
        if spec != self.spec:
            from chronoprobe.models.request_cache import CachedModel, answer_cache

            if isinstance(self.model, CachedModel):
                self.model.store.close()
            self.model = self.spec = None
            gc.collect()
            model = spec.load(options)
            if answers_in is not None:
                model = answer_cache(spec, model, Path(answers_in), options)
            self.model, self.spec = model, spec
        return self.model

    def load(self, spec: ModelSpec, options: LoadOptions, answers_in: str | None) -> None:
        self._model(spec, options, answers_in)

    def prepare(
        self, spec, options, answers_in, view: View, params: Any, rows: ProbeRows
    ) -> tuple[dict, list[str]]:
        """The model's record before it answers (per-model params, family, warnings about
        ``rows``) and what was said about its options."""
        model, said = self._model(spec, options, answers_in), []
        mine, warnings = prepared(view, params, model, rows, said.append)
        return model_record(mine, model, rows, warnings), said

    def predict(self, spec, options, answers_in, view: View, params: Any, rows: list) -> list:
        return view.predict(self._model(spec, options, answers_in), rows, params, None)


class RayProbes:
    """The models of one ``probe`` step, answered by Ray actors; :meth:`start` hands back one
    future per model not finished, each resolving to the model's record once its shards are
    written."""

    def __init__(self, ctx, view: View, params: Any, models: list[tuple[str, ModelSpec]]) -> None:
        from chronoprobe.core.ray_session import connect

        self.ctx, self.view, self.params, self.models = ctx, view, params, models
        self.ray = ray = connect(params.address)
        gpus = int(ray.cluster_resources().get("GPU", 0))
        workers = params.workers or max(1, gpus)
        resources = {"num_gpus": 1} if gpus else {"num_cpus": 1}
        actor = ray.remote(**resources)(ModelWorker)
        self.actors = [actor.remote() for _ in range(workers)]
        self.executor: ThreadPoolExecutor | None = None

    def start(self, rows: ProbeRows) -> dict[int, Future]:
        todo = [i for i in range(len(self.models)) if ModelShards(self.ctx, i).record() is None]
        groups = min(len(todo), len(self.actors)) or 1
        free: queue.Queue = queue.Queue()
        for first in range(groups):
            free.put(self.actors[first::groups])
        self.executor = ThreadPoolExecutor(groups, thread_name_prefix="ray-probe")

        def probe(index: int) -> dict:
            group = free.get()
            try:
                return self._probe(index, group, rows)
            finally:
                free.put(group)

        return {index: self.executor.submit(probe, index) for index in todo}

    def close(self) -> None:
        if self.executor is not None:
            self.executor.shutdown(wait=False, cancel_futures=True)
        for actor in self.actors:
            self.ray.kill(actor)

    def _probe(self, index: int, group: list, rows: ProbeRows) -> dict:
        ray, view, params = self.ray, self.view, self.params
        name, spec = self.models[index]
        options = params.load_options()
        answers_in = None
        if params.reuse_answers and spec.answers_cached:
            from chronoprobe.core.cache_dir import default_cache_dir

            answers_in = str(default_cache_dir())
        loading = (spec, options, answers_in)
        prepare = group[0].prepare.remote(*loading, view, params, rows)
        for actor in group[1:]:  # the others load the model meanwhile
            actor.load.remote(*loading)
        record, said = ray.get(prepare)
        for line in said:
            self.ctx.log.info(line)
        mine = type(params).model_validate(record["params"])
        shards = ModelShards(self.ctx, index)
        size = ray_shard_rows(len(rows.asked), params.batch_size, len(group))
        chunks = shards.plan(rows, size)
        tasks = {
            group[n % len(group)].predict.remote(*loading, view, mine, chunks[n]): n
            for n in shards.missing(chunks)
        }
        asked = len(rows.asked)
        with self.ctx.progress_task(f"{name} ({view.name})") as progress:
            done = asked - sum(len(chunks[n]) for n in tasks.values())
            self._gather(shards, chunks, tasks, lambda size: progress(done + size, asked))
        return shards.finish(record)

    def _gather(self, shards: ModelShards, chunks, tasks: dict, progress: Callable) -> None:
        """Write each shard as its task finishes; ``progress`` is told the rows answered."""
        answered = 0
        while tasks:
            ready, _ = self.ray.wait(list(tasks), num_returns=1)
            for task in ready:
                number = tasks.pop(task)
                shards.write(self.view, number, self.ray.get(task))
                answered += len(chunks[number])
            progress(answered)
