"""The paper's Tables 5 and 6 as a terminal table: what `kgqa train` and `kgqa eval` print."""

from __future__ import annotations

from chronoprobe.core.tables import Figure, ResultTable

_LEVELS = {"simple": 0, "medium": 1, "complex": 2}  # timeline complexities, in order


def metrics_table(metrics: dict, title: str):
    """The paper's Tables 5-6 layout: one row per question group, Hits@1 and Hits@10 (with
    their 95% intervals where metrics.json has them), then the oracle relation's rows, and the
    protocol under the table."""
    from chronoprobe.kgqa.train import describe_input, describe_protocol

    caption = describe_protocol(metrics["answer_type_given"])
    caption += f"; {describe_input(metrics['question_input'])}"
    oracle = metrics.get("oracle_relation", {}).get("types", {})
    if oracle:
        caption += (
            ". Oracle relation (TKG ceiling): the TKG's tables with the true relation in the "
            "question's place, ranking the candidates of the answer type"
        )
    groups = [("overall", metrics), ("simple", metrics["simple"]), ("complex", metrics["complex"])]
    groups += [(f"  {t}", m) for t, m in metrics.get("types", {}).items()]
    groups += [(f"{a} answers", m) for a, m in metrics.get("answer_types", {}).items()]
    groups += [(f"  {t}, oracle relation", m) for t, m in oracle.items()]
    rows = [
        [
            name,
            m["questions"],
            Figure.of(m, "hits@1"),
            Figure.of(m, "hits@10"),
            Figure.of(m, "mrr"),
        ]
        for name, m in groups
    ]
    timeline = metrics.get("timeline") or {}
    levels = timeline.get("by_complexity") or {}
    for name, m in sorted(levels.items(), key=lambda item: _LEVELS.get(item[0], 3)):
        # a timeline group's accuracy is its Hits@1
        hits = [Figure.of(m, "accuracy"), Figure.of(m, "hits@10"), None]
        rows.append([f"timeline {name}", m["n"], *hits])
    captions = [caption]
    if not metrics["questions"]:
        captions.append("No question in the split to answer: no figure")
    if timeline.get("not_answered"):
        from chronoprobe.kgqa.timeline_questions import describe

        line = describe(timeline["not_answered"], metrics["questions"])
        captions.append(line[0].upper() + line[1:])
    return ResultTable(["questions", "n", "Hits@1", "Hits@10", "MRR"], rows, title, captions)
