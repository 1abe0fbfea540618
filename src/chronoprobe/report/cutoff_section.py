"""The report section of a cutoff probe: each model's preference curve by period, with the
estimated effective cutoff marked, and the estimate per relation with what it rests on."""

from __future__ import annotations

from pathlib import Path

from chronoprobe.report.blocks import Block, Section, Stats, Table, Text, with_uncertainty
from chronoprobe.report.plots import embed, line_plot
from chronoprobe.report.sections import answered_nothing, no_metrics, read_metrics, section


def said(group: dict | None) -> str:
    """An estimate as a person reads it: the period, its kind and its 95% interval."""
    if not group:
        return "-"
    if group.get("cutoff") is None:
        why = group.get("why")
        return f"{group.get('kind')} ({why})" if why else "none found"
    where = {"step": "", "after": "at or after ", "before": ""}.get(group["kind"], "")
    interval = group.get("cutoff_interval")
    ends = f" [{interval[0]}, {interval[1]}]" if interval else ""
    return f"{where}{group['cutoff']}{ends}"


def _curve_figure(name: str, overall: dict) -> Block:
    curve = overall["curve"]
    periods = [point["period"] for point in curve]
    values = [point["preference"] for point in curve]
    errors = [
        [
            (v - point["ci95"][0]) if point["ci95"] else 0.0
            for v, point in zip(values, curve, strict=True)
        ],
        [
            (point["ci95"][1] - v) if point["ci95"] else 0.0
            for v, point in zip(values, curve, strict=True)
        ],
    ]
    positions = list(range(len(periods)))
    step = -(-len(periods) // 12)  # at most a dozen period labels on the axis
    series = {name: (positions, values)}
    dashed = ["chance (0.5)"]
    series["chance (0.5)"] = (positions, [0.5] * len(positions))
    if overall.get("cutoff") in periods:
        at = periods.index(overall["cutoff"])
        series[f"cutoff {overall['cutoff']}"] = ([at, at], [0.0, 1.0])
        dashed.append(f"cutoff {overall['cutoff']}")
    figure = line_plot(
        series,
        title=f"{name}: prefers the new answers of the facts that changed",
        xlabel="period of the change",
        ylabel="preference for the new answers",
        markers=True,
        ylim=(0.0, 1.0),
        categories=[p if i % step == 0 else "" for i, p in enumerate(periods)],
        errors={name: errors},
        dashed=dashed,
    )
    table = Table(
        ["period", "preference [95% interval]", "changes"],
        [
            [
                p["period"],
                with_uncertainty({"v": p["preference"], "v_ci95": p["ci95"]}, "v"),
                p["n"],
            ]
            for p in curve
        ],
    )
    return embed(
        figure,
        alt=f"{name}'s preference for the new answers by period, the estimated cutoff marked",
        caption=f"Estimated effective cutoff: {said(overall)}.",
        data=table,
    )


@section("probe:cutoff", headline=("view", "rows", "model_count"))
def cutoff_section(step_dir: Path, record: dict) -> Section:
    """Each model's effective cutoff, its curve, and the estimate per relation."""
    metrics = read_metrics(step_dir)
    title = f"Effective knowledge cutoff: {record.get('id', step_dir.name)}"
    models = metrics.get("models") or {}
    if not models:
        return no_metrics(title)
    blocks: list[Block] = [Stats({"changes": metrics.get("rows"), "models": len(models)})]
    rows = []
    for name, m in models.items():
        note = answered_nothing(name, m)
        if note is not None:
            blocks.append(note)
            continue
        overall = m.get("overall")
        if overall:
            blocks.append(_curve_figure(name, overall))
        for relation, group in (m.get("by_relation") or {}).items():
            rows.append([name, relation, said(group), group.get("changes"), group.get("p_value")])
        rows.append([name, "all", said(overall), m.get("n"), (overall or {}).get("p_value")])
    if rows:
        blocks.append(
            Table(
                ["model", "relation", "effective cutoff [95% interval]", "changes", "p (fall)"],
                rows,
                caption="The last period whose new answers the model prefers before its "
                "preference falls (a least-squares step, tested by shuffling the changes' "
                "periods); 'at or after' the last period: it prefers every change's new "
                "answers; intervals bootstrap subjects.",
            )
        )
    evidence = {m.get("evidence") for m in models.values()}
    blocks.append(Text(f"Evidence: {', '.join(sorted(map(str, evidence)))}.", style="note"))
    return Section(title, blocks)
