"""Free-text continuation of prompts by a decoder, batched, with the key/value cache.

A batch of prompts runs one forward over the prompts, then one forward per generated token that
reads only the new token and the cached keys and values. Causal prompts are padded on the left,
with position ids counted from each prompt's first real token, so every row of a batch sees
exactly what it would see alone. Seq2seq decoders are batched by prefix length (their learned
or relative positions follow the index), so they need no padding at all. Each request decides
its own decoding (greedy or sampled, with its own seeded generator), so an answer does not
depend on the requests it was batched with.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import torch

from chronoprobe.models.base import Progress
from chronoprobe.models.requests import Completion, PromptRequest

# the first newline, or a sentence end: . ! ? before white space, unless the dot closes an
# initial ("J. Smith", "U.S. Army")
STOP = re.compile(r"\n|(?<![^\w][A-Z])(?<!^[A-Z])[.!?](?=\s)")


def cut_answer(raw: str) -> tuple[str, bool]:
    """The answer in a generated text (before the first stop, stripped) and whether a stop was
    reached."""
    match = STOP.search(raw)
    if match is None:
        return raw.strip(), False
    return raw[: match.start()].strip(), True


def left_pad(rows: Sequence[Sequence[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Left-padded ids and their attention mask (a causal prompt's last token is then the last
    position of every row)."""
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, row in enumerate(rows):
        if row:
            ids[i, width - len(row) :] = torch.as_tensor(row, dtype=torch.long)
            mask[i, width - len(row) :] = 1
    return ids, mask


def nucleus_sample(
    logits: torch.Tensor, temperature: float, top_p: float, generator: torch.Generator
) -> int:
    """One token drawn from ``softmax(logits / temperature)`` restricted to its top-p nucleus."""
    probs = torch.softmax(logits.float().cpu() / temperature, dim=-1)
    if top_p < 1.0:
        ordered, order = torch.sort(probs, descending=True)
        outside = torch.cumsum(ordered, -1) - ordered >= top_p  # the most likely token stays
        probs = probs.clone()
        probs[order[outside]] = 0.0
    return int(torch.multinomial(probs, 1, generator=generator))


def _complete_batch(model, requests: Sequence[PromptRequest], rows) -> list[Completion]:
    stops = set(model._special)
    made: list[list[int]] = [[] for _ in requests]
    logprob = [0.0] * len(requests)
    finished = [False] * len(requests)
    generators = [
        torch.Generator().manual_seed(r.seed) if r.temperature > 0 else None for r in requests
    ]
    logits, state = model.start_decoding(rows)
    for _ in range(max(r.max_tokens for r in requests)):
        logprobs = torch.log_softmax(logits.float(), -1)
        tokens = []
        for b, request in enumerate(requests):
            if finished[b]:
                tokens.append(model.pad_id)
                continue
            if generators[b] is None:
                token = int(logits[b].argmax())
            else:
                token = nucleus_sample(logits[b], request.temperature, request.top_p, generators[b])
            tokens.append(token)
            if token in stops:
                finished[b] = True
                continue
            made[b].append(token)
            logprob[b] += logprobs[b, token].item()
            raw = model.tokenizer.decode(made[b], skip_special_tokens=True)
            finished[b] = len(made[b]) >= request.max_tokens or cut_answer(raw)[1]
        if all(finished):
            break
        logits, state = model.continue_decoding(torch.tensor(tokens), state)
    out = []
    for ids, lp in zip(made, logprob, strict=True):
        raw = model.tokenizer.decode(ids, skip_special_tokens=True)
        out.append(Completion(cut_answer(raw)[0], raw, ids, lp))
    return out


def complete(
    model, requests: Sequence[PromptRequest], progress: Progress = None
) -> list[Completion | None]:
    """Every request's continuation, in request order (see the module's docstring); None for
    a prompt that cannot fit the model's positions."""
    if not requests:
        return []
    # a prompt longer than the model's positions (less the tokens to generate) loses its start,
    # as a causal model's context does; one that cannot fit at all is answered None
    prompts = [model.prompt_row(r) for r in requests]
    fitted = [
        model._fit(p, len(p.ids), r.max_tokens) for p, r in zip(prompts, requests, strict=True)
    ]
    # a decoder-only prompt cut to its frame alone has nothing left to continue
    rows = [
        None if f is None or (f[0].encoder is None and len(f[0].ids) <= f[0].head) else f[0]
        for f in fitted
    ]
    results: list[Completion | None] = [None] * len(requests)
    done = sum(row is None for row in rows)
    kept = [i for i, row in enumerate(rows) if row is not None]
    for part in model.prompt_batches([rows[i] for i in kept]):
        batch = [kept[i] for i in part]
        answers = _complete_batch(model, [requests[i] for i in batch], [rows[i] for i in batch])
        for i, answer in zip(batch, answers, strict=True):
            results[i] = answer
        done += len(batch)
        if progress:
            progress(done, len(requests))
    return results
