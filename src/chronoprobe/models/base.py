"""What every adapter shares: the four requests, length bucketing, padding, span location.

An adapter answers a whole list of requests at once. It sorts them by token length, cuts the
sorted list into batches padded only to their own longest member, and writes each answer back at
its request's original index, so a caller never sees the order the work was done in.

Inputs longer than the model's positions are cut to fit, here and only here (``fit_window``):
the gap (or, for a causal model, the whole continuation it scores) and the special tokens around
the text stay whole, and the context farthest from the gap goes first. A causal model's context
lies all on the left, so it loses its beginning, as lm-eval truncates loglikelihood requests. A
request whose gap alone does not fit is answered ``None``, never a score of a cut gap; views
skip its row with ``LanguageModel.unfit_reason``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence

import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from chronoprobe.errors import UserError
from chronoprobe.models.requests import (
    Candidate,
    Completion,
    GenerateRequest,
    PromptRequest,
    Ranking,
    RankRequest,
    ScoreRequest,
    SpanScore,
)

# called as progress(done, total) in units of requests (or, for PLL, of masked copies)
Progress = Callable[[int, int], None] | None


def length_buckets(lengths: Sequence[int | None], batch_size: int) -> Iterator[list[int]]:
    """Indices of ``lengths`` in batches of similar length, longest batch first; a length of
    None is a request that is not run (it does not fit the model), left out.

    Longest first makes an out-of-memory batch size fail at once rather than at the end.
    """
    if batch_size < 1:
        raise UserError(f"batch size must be at least 1, got {batch_size}")
    order = sorted((i for i, n in enumerate(lengths) if n is not None), key=lambda i: -lengths[i])
    for start in range(0, len(order), batch_size):
        yield order[start : start + batch_size]


def pad(rows: Sequence[Sequence[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-padded ids and their attention mask."""
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = torch.as_tensor(row, dtype=torch.long)
        mask[i, : len(row)] = 1
    return ids, mask


def position_limit(model: PreTrainedModel) -> int | None:
    """How many tokens one sequence may hold, or None when the model's positions are relative
    (T5) and set no limit.

    RoBERTa-style embeddings number positions from the padding id + 1, so two of their
    ``max_position_embeddings`` (for padding id 1) are never a token's.
    """
    limit = getattr(model.config, "max_position_embeddings", None)
    if not isinstance(limit, int) or limit < 1:
        return None
    embeddings = getattr(getattr(model, "base_model", None), "embeddings", None)
    padding = getattr(embeddings, "padding_idx", None)
    return limit - padding - 1 if isinstance(padding, int) else limit


def fit_window(
    ids: Sequence[int], keep: tuple[int, int], frame: tuple[int, int], limit: int | None
) -> tuple[list[int], int] | None:
    """``ids`` cut to at most ``limit`` tokens, and how many were cut before ``keep``.

    The first ``frame[0]`` and last ``frame[1]`` ids (the special tokens around the text) and
    ``ids[keep[0]:keep[1]]`` (the gap) stay whole. The context between is cut farthest from the
    gap first: each side gets half the room left, and a side shorter than its half gives the
    rest to the other, so a context on one side only keeps its end nearest the gap. None when
    the frame and the gap alone exceed ``limit``.
    """
    if limit is None or len(ids) <= limit:
        return list(ids), 0
    head, tail = frame
    start, end = keep
    room = limit - head - tail - (end - start)
    if room < 0:
        return None
    before, after = start - head, len(ids) - tail - end
    take_after = min(after, room // 2)
    take_before = min(before, room - take_after)
    take_after = min(after, room - take_before)
    fitted = [*ids[:head], *ids[start - take_before : end + take_after], *ids[len(ids) - tail :]]
    return fitted, before - take_before


def special_frame(tokenizer) -> tuple[list[int], list[int]]:
    """The special ids a tokenizer puts before and after any text (e.g. <s> ... </s>)."""
    plain = tokenizer("a", add_special_tokens=False)["input_ids"]
    framed = tokenizer("a")["input_ids"]
    for start in range(len(framed) - len(plain) + 1):
        if framed[start : start + len(plain)] == plain:
            return framed[:start], framed[start + len(plain) :]
    return [], []


def span_positions(offsets: Sequence[tuple[int, int]], start: int, end: int) -> list[int]:
    """Token positions whose characters overlap ``[start, end)`` (zero-width specials never do)."""
    return [i for i, (a, b) in enumerate(offsets) if a < end and b > start and b > a]


def locate_spans(
    tokenizer, requests: Sequence[ScoreRequest], special_tokens: bool
) -> list[tuple[list[int], list[int]]]:
    """Each request's filled text as ids, and the positions of its span's tokens there."""
    texts = [r.cloze.filled(r.span) for r in requests]
    encoded = tokenizer(texts, add_special_tokens=special_tokens, return_offsets_mapping=True)
    located = []
    for r, text, ids, offsets in zip(
        requests, texts, encoded["input_ids"], encoded["offset_mapping"], strict=True
    ):
        start = len(r.cloze.left)
        positions = span_positions(offsets, start, start + len(r.span))
        if not positions:
            raise UserError(f"span {r.span!r} has no tokens in {text!r}")
        located.append((ids, positions))
    return located


def rank_logits(
    logits: torch.Tensor, candidates: Sequence[Sequence[int]], top_k: int
) -> list[Ranking]:
    """Top-k token ids with log-probabilities and the 1-based rank of each candidate id.

    A candidate's rank counts the tokens scored strictly higher, so ties rank optimistically;
    a token masked to -inf (outside a restricted vocabulary) ranks after every allowed one.
    """
    logprobs = torch.log_softmax(logits.float(), dim=-1)
    k = min(top_k, logprobs.shape[-1])
    top = torch.topk(logprobs, k, dim=-1)
    top_ids, top_lp = top.indices.tolist(), top.values.tolist()
    flat = [(row, c) for row, cands in enumerate(candidates) for c in cands]
    ranks: list[list[int]] = [[] for _ in candidates]
    if flat:
        rows = torch.tensor([r for r, _ in flat], device=logprobs.device)
        ids = torch.tensor([c for _, c in flat], device=logprobs.device)
        gold = logprobs[rows, ids]
        counts = (logprobs[rows] > gold[:, None]).sum(-1) + 1
        for (row, _), rank in zip(flat, counts.tolist(), strict=True):
            ranks[row].append(rank)
    return [
        Ranking(token_ids=i, logprobs=lp, candidate_ranks=r)
        for i, lp, r in zip(top_ids, top_lp, ranks, strict=True)
    ]


@torch.inference_mode()
def logits_at_positions(
    model: PreTrainedModel,
    split: tuple | None,
    device: torch.device,
    ids: torch.Tensor,
    attention: torch.Tensor,
    rows: torch.Tensor,
    cols: torch.Tensor,
) -> torch.Tensor:
    """Vocabulary logits of ``model`` at ``(rows[i], cols[i])`` only. With ``split`` (its base
    model and output head) the head projects those positions alone; else the full forward
    runs and the positions are picked after it. Inputs go to ``device`` (the adapter's)."""
    ids, attention = ids.to(device), attention.to(device)
    rows, cols = rows.to(device), cols.to(device)
    if split is None:
        return model(input_ids=ids, attention_mask=attention).logits[rows, cols]
    base, head = split
    return head(base(input_ids=ids, attention_mask=attention).last_hidden_state[rows, cols])


class LanguageModel(ABC):
    """A model and its tokenizer behind the four requests (rank, score, generate, complete);
    subclasses add one family each."""

    family: str = ""
    # the transformers auto class that loads this family's weights ("AutoModelForMaskedLM"...)
    auto_class: str = ""
    # rank and generate see only the text before the gap (causal LMs): a gap-first sentence
    # ("[MASK] is the head of ...") leaves them nothing of the question to read
    reads_left_only: bool = False
    # an instruct or chat model, whose prompts can be framed as chat turns (``PromptRequest.chat``;
    # causal models with a chat template, see CausalLM)
    speaks_chat: bool = False

    def __init__(
        self,
        model: PreTrainedModel,
        tokenizer: PreTrainedTokenizerBase,
        *,
        batch_size: int = 64,
        name: str = "",
    ) -> None:
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.batch_size = batch_size
        self.name = name or getattr(model.config, "name_or_path", "") or type(model).__name__
        self.pad_id = self._pick_pad_id()
        self.lead, self.trail = special_frame(tokenizer)
        self.max_positions = position_limit(model)
        self._token_text: dict[int, str] = {}

    @property
    def unfit_reason(self) -> str:
        """Why a request answered ``None`` was not: its gap does not fit the positions."""
        return f"longer than the model's {self.max_positions:,} positions"

    @property
    def device(self) -> torch.device:
        """Where inputs go: the device of the input embeddings (the first of several devices
        when the model's layers are spread over them)."""
        return self.model.get_input_embeddings().weight.device

    def _pick_pad_id(self) -> int:
        """Any id works as padding (masked out), but a real pad token keeps outputs readable."""
        for token_id in (
            self.tokenizer.pad_token_id,
            self.tokenizer.eos_token_id,
            self.tokenizer.unk_token_id,
        ):
            if token_id is not None:
                return int(token_id)
        return 0

    def vocabulary_mask(self, vocabulary: Sequence[int] | None, size: int) -> torch.Tensor | None:
        """Additive mask that keeps only ``vocabulary`` (an entity vocabulary, say) rankable."""
        if vocabulary is None:
            return None
        mask = torch.full((size,), float("-inf"), device=self.device)
        mask[torch.as_tensor(list(vocabulary), device=self.device)] = 0.0
        return mask

    def vocabulary_size(self) -> int:
        """How many ids ``rank`` ranks."""
        return int(self.model.config.vocab_size)

    def decode(self, token_ids: Sequence[int]) -> str:
        return self.tokenizer.decode(list(token_ids), skip_special_tokens=True).strip()

    def token_text(self, token_id: int) -> str:
        """One token as a prediction string, memoised: top-k lists repeat the same tokens."""
        text = self._token_text.get(token_id)
        if text is None:
            text = self._token_text[token_id] = self.decode([token_id])
        return text

    @abstractmethod
    def label_token_ids(self, requests: Sequence[ScoreRequest]) -> list[list[int]]:
        """The ids a span is scored as, located as this family's ``score`` locates them."""

    def _ranked(
        self,
        requests: Sequence[RankRequest],
        costs: Sequence[int | None],
        gap_logits: Callable[[list[int]], torch.Tensor],
        top_k: int,
        vocabulary: Sequence[int] | None,
        progress: Progress,
    ) -> list[Ranking | None]:
        """Rankings batch by batch (length-bucketed by ``costs``, None for a request that does
        not fit); ``gap_logits(batch)`` gives the vocabulary logits at the gap of each request
        of a batch of indices."""
        restrict = self.vocabulary_mask(vocabulary, self.vocabulary_size())
        results: list[Ranking | None] = [None] * len(requests)
        total = sum(c is not None for c in costs)
        done = 0
        for batch in length_buckets(costs, self.batch_size):
            logits = gap_logits(batch).float()
            if restrict is not None:
                logits = logits + restrict
            rankings = rank_logits(logits, [requests[i].candidates for i in batch], top_k)
            for i, ranking in zip(batch, rankings, strict=True):
                results[i] = ranking
            done += len(batch)
            if progress:
                progress(done, total)
        return results

    @abstractmethod
    def rank(
        self,
        requests: Sequence[RankRequest],
        top_k: int = 10,
        vocabulary: Sequence[int] | None = None,
        progress: Progress = None,
    ) -> list[Ranking | None]:
        """Rank the vocabulary at each request's gap (None: the request does not fit)."""

    @abstractmethod
    def score(
        self, requests: Sequence[ScoreRequest], progress: Progress = None
    ) -> list[SpanScore | None]:
        """Summed log-probability of each request's span in its gap (None: it does not fit)."""

    @abstractmethod
    def generate(
        self, requests: Sequence[GenerateRequest], progress: Progress = None
    ) -> list[list[Candidate] | None]:
        """Greedy fillings of each gap, one candidate per length 1..max_tokens (None: the
        request does not fit)."""

    def complete(
        self, requests: Sequence[PromptRequest], progress: Progress = None
    ) -> list[Completion]:
        """Each prompt's free-text continuation (causal and seq2seq models)."""
        raise UserError(
            f"{self.name}: a {self.family} model does not continue prompts; generating free "
            "text needs a causal or seq2seq model"
        )

    @property
    def fills_spans(self) -> bool:
        """Whether the model has ``beam_spans``, ECBD's Recall@10 predictions (T5-style seq2seq
        models; see ``requests.NO_BEAM_SPANS`` for why the others have not)."""
        return False
