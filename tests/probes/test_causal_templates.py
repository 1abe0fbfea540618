"""A causal model's label score reads the question in every built-in template.

DynamicTempLAMA puts the gap first for P6, P286 and P488 ("[MASK] is the head of the government
of X."), LAMA-TK for every subject-masked statement ("[MASK] played for Y from ..."): scored as
log p(label | left context), a causal model would give a label the same score whatever X or Y
is. The pll view scores log p(label + right | left) instead, so for every template the score
must change with the entity the query names.
"""

from __future__ import annotations

import pytest

from chronoprobe.datasets.lamatk import StatementBuilder, YearFact, fill, load_lamatk_templates
from chronoprobe.models.requests import Cloze
from chronoprobe.probes import VIEWS, ProbeRow
from chronoprobe.templates import MASK, load_cloze_templates

NAMED = ("Alice Smith", "Bob Jones")  # the entity a query names, varied
LABEL = "Globex"  # the label scored in the gap


class _Labels:
    """The one part of a KG a statement builder reads: entity labels (ids are labels here)."""

    @staticmethod
    def label(entity: str) -> str:
        return entity


def drift_queries() -> dict[str, list[tuple[str, str]]]:
    """Relation -> (query, label) for each named entity."""
    templates = load_cloze_templates("drift")
    return {r: [(t.query(e), LABEL) for e in NAMED] for r, t in templates.items()}


def lamatk_queries() -> dict[str, list[tuple[str, str]]]:
    """Every LAMA-TK statement shape, each slot masked in turn, as (query, label) for each
    named entity: the named entity fills the side not asked for (the subject when a year is
    asked for); plus the boundary and implicit-knowledge query templates, which ask for years."""
    templates = load_lamatk_templates()
    builder = StatementBuilder(_Labels(), templates)
    out: dict[str, list[tuple[str, str]]] = {}
    for relation in templates.relations:
        for slot in builder.slots(YearFact(relation, "s", "o", 2010, 2012)):
            pairs = []
            for entity in NAMED:
                subject, obj = (LABEL, entity) if slot == "subject" else (entity, LABEL)
                fact = YearFact(relation, subject, obj, 2010, 2012)
                pairs.append((builder.sentence(fact, slot), builder.target(fact, slot)))
            out[f"{relation} {slot}"] = pairs
    for name, template in [
        *((f"boundary {k}", v) for k, v in templates.boundary.items() if k != "relation"),
        *((f"implicit {k}", v) for k, v in templates.implicit.items() if k != "relation"),
    ]:
        out[name] = [(f"{fill(template, entity, LABEL, [MASK])}.", "2011") for entity in NAMED]
    return out


@pytest.mark.parametrize("family", ["drift", "lamatk"])
def test_a_causal_label_score_depends_on_the_named_entity_in_every_template(tiny, family):
    queries = drift_queries() if family == "drift" else lamatk_queries()
    rows = [
        ProbeRow(f"{name}/{i}", Cloze.from_query(query), [label], "2020", None)
        for name, pairs in queries.items()
        for i, (query, label) in enumerate(pairs)
    ]
    gap_first = [r.id for r in rows if not r.cloze.left.strip()]
    if family == "drift":  # the relations this test is about are among them
        assert {"P6/0", "P286/0", "P488/0"} <= set(gap_first)
    else:
        assert "P54 subject/0" in gap_first
    scores = {
        p["id"]: next(iter(p["label_scores"].values()))
        for p in VIEWS["pll"].predict(tiny("llama"), rows, VIEWS["pll"].params(), None)
    }
    same = [name for name in queries if abs(scores[f"{name}/0"] - scores[f"{name}/1"]) < 1e-4]
    assert same == []


@pytest.mark.parametrize(
    ("content", "reason"),
    [(None, "a folder; pass a YAML file of templates"), (b"\x80junk", "not a YAML file of")],
)
def test_a_templates_file_that_is_a_folder_or_no_yaml_is_named_with_why(tmp_path, content, reason):
    path = tmp_path / "templates.yaml"
    if content is None:
        path.mkdir()
    else:
        path.write_bytes(content)
    with pytest.raises(ValueError, match=f"^{path}: {reason}"):
        load_cloze_templates("drift", path)
