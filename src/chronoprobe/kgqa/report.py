"""The paper's Tables 5 and 6 as a terminal table: what `kgqa train` and `kgqa eval` print."""

from __future__ import annotations

from rich.table import Table

from chronoprobe.metrics.uncertainty import with_interval


def metrics_table(metrics: dict, title: str):
    """The paper's Tables 5-6 layout: one row per question group, Hits@1 and Hits@10, then the
    oracle relation's rows, and the protocol under the title."""
    from chronoprobe.kgqa.train import describe_protocol

    caption = describe_protocol(metrics["answer_type_given"])
    caption += f"; the encoder read the {metrics['question_input']}"
    oracle = metrics.get("oracle_relation", {}).get("types", {})
    if oracle:
        caption += (
            ". Oracle relation (TKG ceiling): the TKG's tables with the true relation in the "
            "question's place, ranking the candidates of the answer type"
        )
    caption += "; in brackets, Hits@1's 95% interval (Wilson)"
    table = Table(title=title, caption=caption)
    for column in ("questions", "n", "Hits@1", "Hits@10", "MRR"):
        left = column == "questions"
        table.add_column(column, justify="left" if left else "right", no_wrap=left)
    groups = [("overall", metrics), ("simple", metrics["simple"]), ("complex", metrics["complex"])]
    groups += [(f"  {t}", m) for t, m in metrics.get("types", {}).items()]
    groups += [(f"{a} answers", m) for a, m in metrics.get("answer_types", {}).items()]
    groups += [(f"  {t}, oracle relation", m) for t, m in oracle.items()]
    for name, m in groups:
        table.add_row(
            name,
            f"{m['questions']:,}",
            with_interval(m, "hits@1"),
            f"{m['hits@10']:.3f}",
            f"{m['mrr']:.3f}",
        )
    return table
