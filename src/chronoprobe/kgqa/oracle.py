"""The oracle-relation ceiling: simple questions answered by the TKG embeddings themselves.

A simple question asks one fact: (s, r, ?, t), (?, r, o, t) or (s, r, o, ?). The oracle puts the
true relation where CronKGQA puts the question vector, from the TKG checkpoint's own relation
table: r when the question gives the fact's subject (its annotated ``head``), the reciprocal
r + R the TKG trained on when it gives the object (``tail``). Head, tail and time come through the
same data path as the QA models' (:func:`chronoprobe.kgqa.data.encode`), and the rank is
:func:`chronoprobe.metrics.ranking.gold_ranks`'s: best gold answer, the others set aside, ties
against. A simple question's answers are every answer its query has in the KG (every year a
fact holds), so this is the TKG's filtered link-prediction rank on the question's query: what
the embeddings can give a QA model that understood the question perfectly.

The oracle knows the answer type: it ranks entities for entity questions and years for time
questions, as link prediction does. A simple question it cannot score (a relation, entity or
year the embeddings never saw, or no annotation of which slot its entity fills) counts as a
miss, so its figures and the QA model's have the same questions; over a static checkpoint
(ComplEx, no years) only entity questions are scored.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from chronoprobe.errors import UserError
from chronoprobe.kgqa.data import AnswerVocab, Questions, is_simple
from chronoprobe.kgqa.evaluate import breakdown
from chronoprobe.metrics.ranking import gold_ranks
from chronoprobe.tkg.models import TKGModel

MISS = torch.iinfo(torch.long).max  # gold_ranks' rank of a question that cannot be answered


def load_tkg(tkg_dir: Path, vocab: AnswerVocab, device: torch.device | str = "cpu"):
    """The TKG checkpoint a QA model was trained over: (model, relation ids), checked to have
    the QA model's candidates."""
    from chronoprobe.tkg import checkpoint as tkg_checkpoint

    saved = tkg_checkpoint.load(Path(tkg_dir), device)
    if saved.vocab.entities != vocab.entities or tuple(saved.vocab.years) != vocab.years:
        raise UserError(
            f"{tkg_dir}: its entities or years are not the QA model's candidates; pass the TKG "
            "checkpoint the QA model was trained over with --tkg"
        )
    return saved.model, saved.vocab.relations


def _queries(
    questions: Questions, index: np.ndarray, relations: Sequence[str], n_entities: int, n_times: int
) -> tuple[list[tuple[int, int, int, int]], Counter]:
    """(question, s, r, t-or-o) for every question of ``index`` the TKG can score."""
    relation_index = {r: i for i, r in enumerate(relations)}
    queries: list[tuple[int, int, int, int]] = []
    left: Counter = Counter()
    for i in index.tolist():
        relation = relation_index.get(questions.relations[i])
        role = questions.head_roles[i]
        head, tail, time = (int(getattr(questions, f)[i]) for f in ("head", "tail", "time"))
        if relation is None:
            left["relation unknown to the embeddings"] += 1
        elif role is None:
            left["no annotation of the head's slot"] += 1
        elif questions.is_time[i]:
            subject, other = (head, tail) if role == "head" else (tail, head)
            if n_entities in (subject, other):
                left["entity unknown to the embeddings"] += 1
            else:
                queries.append((i, subject, relation, other))
        elif head == n_entities or time == n_times:
            left["entity or year unknown to the embeddings"] += 1
        else:
            reciprocal = 0 if role == "head" else len(relations)
            queries.append((i, head, relation + reciprocal, time))
    return queries, left


@dataclass
class OracleRanks:
    index: np.ndarray  # the simple questions it answers, as indices into the questions
    ranks: np.ndarray  # their ranks; MISS where it could not score one
    unscored: Counter  # why it could not, counted

    def metrics(self, questions: Questions) -> dict:
        """Hits@1/10 and MRR over the simple questions, per type and answer type, and the
        questions it could not score (counted as misses)."""
        kinds = [questions.types[i] for i in self.index]
        metrics = breakdown(self.ranks, kinds, [questions.answer_types[i] for i in self.index])
        del metrics["simple"], metrics["complex"]  # every question here is simple
        return {**metrics, "unscored": dict(self.unscored)}


@torch.inference_mode()
def oracle_ranks(
    tkg: TKGModel,
    relations: Sequence[str],
    questions: Questions,
    batch_size: int = 1024,
    device: torch.device | str = "cpu",
) -> OracleRanks:
    """The oracle's ranks of the simple questions of ``questions``."""
    n_e, n_t = tkg.sizes["n_entities"], tkg.sizes["n_times"]
    index = np.flatnonzero(is_simple(questions.types))
    if not tkg.has_time:  # no years to rank: time questions are out of its reach
        index = index[~questions.is_time[index].numpy()]
    queries, left = _queries(questions, index, relations, n_e, n_t)
    position = {q: p for p, q in enumerate(index.tolist())}
    ranks = np.full(len(index), MISS, dtype=np.int64)
    for want_time in (False, True):
        chosen = [q for q in queries if bool(questions.is_time[q[0]]) == want_time]
        for batch in torch.tensor(chosen, dtype=torch.long).split(batch_size) if chosen else ():
            which, s, r, x = (column.to(device) for column in batch.unbind(1))
            gold = questions.gold_mask(which.cpu(), n_e + n_t).to(device)
            if want_time:
                scores, gold = tkg.time_scores(s, r, x).float(), gold[:, n_e:]
            else:
                scores, gold = tkg.object_scores(s, r, x).float(), gold[:, :n_e]
            for q, rank in zip(which.tolist(), gold_ranks(scores, gold).tolist(), strict=True):
                ranks[position[q]] = rank
    return OracleRanks(index, ranks, left)
