"""The LAMA-TK experiment plots: several recite steps of one run, compared atop the first one's
section and keyed on the params of the steps that trained their models and built their rows
(hand-written step records and metrics)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from chronoprobe.report.blocks import Image, Percent, Stats, Text
from chronoprobe.report.document import _comparisons
from chronoprobe.report.lamatk_section import compare_recite_steps, recite_steps
from chronoprobe.report.rundir import load_run
from chronoprobe.report.sections import section_kind

FOUR = ("acc@1", "acc@5", "hit@5", "hit@10")


def group(statements: int, acc1: float, hit10: float = 1.0) -> dict:
    return {
        "statements": statements,
        "queries": statements,
        "acc@1": acc1,
        "acc@5": 1.0,
        "hit@5": 1.0,
        "hit@10": hit10,
    }


def memorized(statements: int, acc1: float, single: float, multi: bool) -> dict:
    answers = {"single": group(statements - 10 * multi, single)}
    if multi:
        answers["multi"] = group(10, 0.5, 0.4)
    return {**group(statements, acc1), "by_answers": answers}


def queried(acc1: float, hit10: float, by_template: dict | None = None) -> dict:
    queries = group(40, acc1, hit10)
    if by_template:
        queries["by_template"] = by_template
    return queries


def recited(
    entry: dict, metrics: dict | None, rows: str | None = None, data: str | None = None
) -> list[tuple[dict, dict | None]]:
    """A memorize step and its recite step ``<id>-r`` (over ``rows`` of ``data``, default the
    memorize step's own statements) whose one model has ``metrics``."""
    params = {"view": "recite", **({"rows": rows} if rows else {})}
    inputs = {"data": data or entry["id"], "model": entry["id"]}
    probe = {"id": f"{entry['id']}-r", "kind": "probe", "inputs": inputs, "params": params}
    if metrics is None:
        return [(entry, None), (probe, None)]
    return [(entry, {"epochs": 3}), (probe, {"view": "recite", "models": {"model": metrics}})]


def compared(run_dir: Path):
    """The recite steps as the comparison sees them, and its blocks."""
    run = load_run(run_dir)
    infos = [s for s in run.steps if s.done and s.kind == "probe"]
    return recite_steps(run, infos), compare_recite_steps(run, infos)


def make_run(root: Path, steps: list[tuple[dict, dict | None]]) -> Path:
    """A run directory with ``steps`` as (config entry, metrics; None: not run yet)."""
    root.mkdir()
    config = {"name": "lamatk-test", "seed": 0, "steps": [entry for entry, _ in steps]}
    (root / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    for entry, metrics in steps:
        if metrics is None:
            continue
        step_dir = root / "steps" / entry["id"]
        step_dir.mkdir(parents=True)
        record = {
            "id": entry["id"],
            "kind": entry["kind"],
            "params": entry.get("params", {}),
            "inputs": entry.get("inputs", {}),
            "seconds": 1.0,
        }
        (step_dir / "step.json").write_text(json.dumps(record), encoding="utf-8")
        (step_dir / "metrics.json").write_text(json.dumps(metrics), encoding="utf-8")
    return root


def flat(pairs: list[list[tuple[dict, dict | None]]]) -> list[tuple[dict, dict | None]]:
    return [step for pair in pairs for step in pair]


def mem(step_id: str, conflicts: bool, sample: int) -> dict:
    params = {"task": "memorize", "conflicts": conflicts, "sample": sample, "preset": "tiny"}
    return {"id": step_id, "kind": "memorize", "inputs": {"kg": "world"}, "params": params}


@pytest.fixture
def capacity_run(tmp_path) -> Path:
    return make_run(
        tmp_path / "capacity",
        [
            ({"id": "world", "kind": "kg", "params": {"source": "synth"}}, {"facts": 9}),
            # without conflicts: the same draw less its 10 multi-answer statements
            *recited(mem("big-clean", False, 400), memorized(390, 0.90, 0.90, multi=False)),
            *recited(mem("small-conflicts", True, 200), memorized(200, 0.80, 0.85, multi=True)),
            *recited(mem("small-clean", False, 200), memorized(190, 0.95, 0.95, multi=False)),
            *recited(mem("big-conflicts", True, 400), memorized(400, 0.70, 0.75, multi=True)),
            *recited(mem("later", True, 800), None),
            ({"id": "report", "kind": "report"}, None),
        ],
    )


def images(blocks) -> list[Image]:
    return [b for b in blocks if isinstance(b, Image)]


def test_capacity_curve_and_one_to_one_bars_key_on_params(capacity_run):
    steps, blocks = compared(capacity_run)
    assert [(s.id, s.task, s.conflicts, s.start) for s in steps] == [
        ("big-clean-r", "memorize", False, "random tiny"),
        ("small-conflicts-r", "memorize", True, "random tiny"),
        ("small-clean-r", "memorize", False, "random tiny"),
        ("big-conflicts-r", "memorize", True, "random tiny"),
    ]  # the step not run yet is left out
    assert isinstance(blocks[0], Text) and "4 recite steps" in blocks[0].text
    curve, bars = images(blocks)
    # points sorted by statements; one line per conflicts setting, with conflicts first
    assert curve.alt == (
        "Line plot of Acc@1 against statements: with conflicts: 200 → 80%, 400 → 70%; "
        "without conflicts: 190 → 95%, 390 → 90%"
    )
    assert curve.uri.startswith("data:image/png;base64,")
    # each point's multi-answer share, measured on the statements it recited
    assert [(row[0], row[-3]) for row in curve.data.rows] == [
        ("small-clean-r", Percent(0.0)),
        ("small-conflicts-r", Percent(0.05)),
        ("big-clean-r", Percent(0.0)),
        ("big-conflicts-r", Percent(0.025)),
    ]
    # the 1-1 effect: single-answer Acc@1 of runs fed the same single-answer statements
    assert bars.alt == (
        "Bar chart of single-answer Acc@1: 190: with 85%, without 95%; 390: with 75%, without 90%"
    )
    assert [row[:3] for row in bars.data.rows] == [
        ["small-conflicts-r", "with conflicts", 190],
        ["small-clean-r", "without conflicts", 190],
        ["big-conflicts-r", "with conflicts", 390],
        ["big-clean-r", "without conflicts", 390],
    ]


def test_only_the_first_recite_step_opens_with_the_comparison(capacity_run):
    comparisons = _comparisons(load_run(capacity_run))
    assert list(comparisons) == ["big-clean-r"] and len(images(comparisons["big-clean-r"])) == 2


def test_a_lone_step_draws_nothing(tmp_path):
    run = make_run(
        tmp_path / "one", recited(mem("only", True, 100), memorized(100, 0.9, 0.9, multi=True))
    )
    assert compared(run)[1] == []
    assert _comparisons(load_run(run)) == {"only-r": []}


def test_boundary_bars_per_time_masking_rate(tmp_path):
    def step(step_id: str, k: float) -> dict:
        params = {"task": "boundary", "time_masking": k, "preset": "tiny"}
        return {"id": step_id, "kind": "memorize", "inputs": {"kg": "w"}, "params": params}

    run = make_run(
        tmp_path / "boundary",
        [
            *recited(step("k100", 1.0), queried(0.5, 0.9), "queries.jsonl"),
            (
                {
                    "id": "k100-statements",
                    "kind": "probe",
                    "inputs": {"data": "k100", "model": "k100"},
                    "params": {"view": "recite"},
                },
                {"view": "recite", "models": {"model": memorized(80, 0.99, 0.99, multi=False)}},
            ),
            *recited(step("k0", 0.0), queried(0.1, 0.3), "queries.jsonl"),
            *recited(step("k10", 0.1), queried(0.4, 0.8), "queries.jsonl"),
        ],
    )
    steps, blocks = compared(run)
    # the statements a boundary model was fed are no point of a capacity curve
    assert [s.task for s in steps] == ["boundary", "boundary training", "boundary", "boundary"]
    (bars,) = images(blocks)
    assert bars.alt.startswith("Bar chart, Boundary queries")
    assert bars.alt.endswith(
        "time masking 0%: Acc@1 10%, Acc@5 100%, Hit@5 100%, Hit@10 30%; "
        "time masking 10%: Acc@1 40%, Acc@5 100%, Hit@5 100%, Hit@10 80%; "
        "time masking 100%: Acc@1 50%, Acc@5 100%, Hit@5 100%, Hit@10 90%"
    )
    assert [row[:2] for row in bars.data.rows] == [
        ["time masking 0%", "k0-r"],
        ["time masking 10%", "k10-r"],
        ["time masking 100%", "k100-r"],
    ]


def test_implicit_bars_per_template_and_start(tmp_path):
    def step(step_id: str, inputs: dict, **params) -> dict:
        params = {"task": "implicit", "preset": "tiny", **params}
        return {"id": step_id, "kind": "memorize", "inputs": inputs, "params": params}

    def templates(original: float, new: float) -> dict:
        return {"original": group(20, original, 0.9), "new": group(20, new, 0.2)}

    q = "queries.jsonl"
    run = make_run(
        tmp_path / "implicit",
        [
            ({"id": "pre", "kind": "pretrain", "inputs": {"kg": "w"}}, {"lines": 5}),
            *recited(step("rand", {"kg": "w"}), queried(0.3, 0.5, templates(0.5, 0.1)), q),
            *recited(
                step("warm", {"kg": "w", "pretrained": "pre"}),
                queried(0.3, 0.5, templates(0.4, 0.2)),
                q,
            ),
            *recited(
                step("hub", {"kg": "w"}, init="/models/roberta-base", task="boundary"),
                queried(0.1, 0.2),
                q,
            ),
        ],
    )
    steps, blocks = compared(run)
    assert [s.start for s in steps] == ["random tiny", "pretrained (pre)", "init roberta-base"]
    # the rows' task decides what a step recited: boundary queries are no implicit bars
    assert [s.task for s in steps] == ["implicit", "implicit", "boundary"]
    (bars,) = images(blocks)
    assert bars.alt.endswith(
        "random tiny: Acc@1 original 50%, Acc@1 new 10%, Hit@10 original 90%, Hit@10 new 20%; "
        "pretrained (pre): Acc@1 original 40%, Acc@1 new 20%, Hit@10 original 90%, "
        "Hit@10 new 20%"
    )


def test_a_step_given_statements_is_keyed_on_its_data(tmp_path):
    """With a ``statements`` input the step's own conflicts param was not used: whether its
    statements held multi-answer ones decides the line."""

    def given(step_id: str, data: str) -> dict:
        return {"id": step_id, "kind": "memorize", "inputs": {"statements": data}, "params": {}}

    run = make_run(
        tmp_path / "given",
        [
            *recited(given("a", "b1"), memorized(100, 0.8, 0.9, multi=True), data="b1"),
            *recited(given("b", "b2"), memorized(90, 0.9, 0.9, multi=False), data="b2"),
        ],
    )
    steps, blocks = compared(run)
    assert [s.conflicts for s in steps] == [True, False]
    curve, _ = images(blocks)
    assert "with conflicts: 100 → 80%; without conflicts: 90 → 90%" in curve.alt


def test_one_to_one_pairs_need_the_same_single_answer_statements(tmp_path):
    """Two runs of one size whose single-answer statements differ (a non-conflict set drawn
    apart from the conflict one) are not a Table 3 pair."""
    run = make_run(
        tmp_path / "unpaired",
        [
            *recited(mem("c", True, 200), memorized(200, 0.8, 0.85, multi=True)),
            *recited(mem("n", False, 200), memorized(200, 0.9, 0.9, multi=False)),
        ],
    )
    (curve,) = images(compared(run)[1])
    assert curve.alt.startswith("Line plot")


def test_the_section_says_how_the_sample_was_drawn(tmp_path):
    sample = {
        "requested": 200,
        "seed": 0,
        "from_statements": 9664,
        "queries": 183,
        "statements": 204,
        "multi_answer": 14,
        "multi_answer_share": 14 / 204,
    }

    def trained(statements: int) -> dict:
        record = {"statements": statements, "epochs": 3, "final_loss": 0.1}
        return {**record, "statements_per_s": 900.0, "sample": sample}

    run = make_run(tmp_path / "drawn", [(mem("c", True, 200), trained(204))])
    run = make_run(tmp_path / "drawn-clean", [(mem("n", False, 200), trained(190))])
    build = section_kind("memorize").build
    with_conflicts = build(tmp_path / "drawn" / "steps" / "c", {"id": "c"}).blocks
    without = build(run / "steps" / "n", {"id": "n"}).blocks
    drawn = (
        "Sampled (seed 0): 183 whole queries, 204 of 9,664 statements for 200 asked; 6.9% of "
        "them multi-answer, measured within the sample."
    )
    assert [b.text for b in with_conflicts if isinstance(b, Text) and "Sampled" in b.text] == [
        drawn
    ]
    assert [b.text for b in without if isinstance(b, Text) and "Sampled" in b.text] == [
        drawn + " Fed without conflicts: the 14 multi-answer statements were removed."
    ]
    assert next(b.items for b in without if isinstance(b, Stats))["statements"] == 190


def test_the_recite_section_gives_the_multi_answer_share(tmp_path):
    run = make_run(tmp_path / "r", recited(mem("c", True, 200), memorized(204, 0.8, 0.85, True)))
    blocks = section_kind("probe", {"params": {"view": "recite"}}).build(
        run / "steps" / "c-r", {"id": "c-r", "params": {"view": "recite"}}
    )
    tiles = [b.items for b in blocks.blocks if isinstance(b, Stats)]
    assert tiles[0]["statements"] == 204 and tiles[0]["multi-answer"] == Percent(10 / 204)


def write_predictions(step_dir: Path, rows: list[tuple[str, bool, bool]]) -> None:
    """predictions.parquet with (id, multi_answer, acc_at_1) per recited row."""
    ids, multi, hits = (list(column) for column in zip(*rows, strict=True))
    table = pa.table({"id": ids, "multi_answer": multi, "acc_at_1": hits})
    pq.write_table(table, step_dir / "predictions.parquet")


def test_one_to_one_pairs_count_the_statements_right_in_one_run_only(tmp_path):
    """The same three single-answer statements in both runs: s1 is right in both, s2 only
    beside the conflicts, s3 only without them; the multi-answer row m1 is not counted. A second
    pair recited different statements (other ids), so it gets no count."""
    run = make_run(
        tmp_path / "paired",
        [
            *recited(mem("c", True, 4), memorized(13, 0.8, 0.67, multi=True)),
            *recited(mem("n", False, 4), memorized(3, 0.67, 0.67, multi=False)),
            *recited(mem("c2", True, 8), memorized(18, 0.8, 0.8, multi=True)),
            *recited(mem("n2", False, 8), memorized(8, 0.8, 0.8, multi=False)),
        ],
    )
    steps = run / "steps"
    write_predictions(
        steps / "c-r",
        [("s1", False, True), ("m1", True, True), ("s2", False, True), ("s3", False, False)],
    )
    write_predictions(
        steps / "n-r", [("s1", False, True), ("s2", False, False), ("s3", False, True)]
    )
    write_predictions(steps / "c2-r", [(f"a{i}", False, True) for i in range(8)])
    write_predictions(steps / "n2-r", [(f"b{i}", False, True) for i in range(8)])
    _, bars = images(compared(run)[1])
    assert [(row[0], row[-1]) for row in bars.data.rows] == [
        ("c-r", 1),
        ("n-r", 1),
        ("c2-r", None),
        ("n2-r", None),
    ]
