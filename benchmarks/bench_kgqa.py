"""QA evaluation throughput (questions/s) of CronKGQA, EmbedKGQA and the LM baseline.

Builds a synthetic world (``--facts``), its CronQuestions split and random entity and year
tables of ``--rank`` (evaluation cost does not depend on how well they were trained), then
answers the test questions (repeated up to ``--questions``) with each model and reports
questions/s end to end (tokenising, encoding, scoring every candidate, ranking, top 10) and the
share of that time spent tokenising and encoding. Pass ``--encoder`` to time a Hugging Face
encoder (its weights must be on disk), ``--device cuda`` for a GPU, ``--question-input`` to
encode the question text (the default, as `kgqa train`) or its template.

    python benchmarks/bench_kgqa.py [--facts 20000] [--questions 5000] [--rank 64]
                                    [--batch-size 256] [--device cpu] [--encoder tiny]
                                    [--question-input question|template]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import torch


def _world(facts: int, rank: int, root: Path):
    """The cronq directory, the answer vocabulary and random entity and year tables."""
    from chronoprobe.datasets.writers import write_cronq
    from chronoprobe.kg.synth import SynthConfig, synthesize
    from chronoprobe.kgqa.data import AnswerVocab
    from chronoprobe.tkg.data import intervals_of

    kg = synthesize(SynthConfig(seed=0, facts=facts, text=False)).kg
    write_cronq(kg, root / "cronq", max_per_template=1000, seed=0)
    kg_vocab, _, _ = intervals_of(kg)
    vocab = AnswerVocab(kg_vocab.entities, tuple(kg_vocab.years))
    generator = torch.Generator().manual_seed(0)
    entity = torch.randn(vocab.n_entities, 2 * rank, generator=generator) * 0.1
    time_table = torch.randn(vocab.n_times, 2 * rank, generator=generator) * 0.1
    return root / "cronq", vocab, entity, time_table


def _repeat(questions, n: int):
    """The questions repeated (by index) to n, so that small worlds still time a long run."""
    from chronoprobe.kgqa.data import Questions

    index = torch.arange(n) % len(questions)
    counts = questions.answer_counts()[index]
    starts = questions.answer_offsets[index]
    flat = torch.cat(
        [questions.answer_flat[s : s + c] for s, c in zip(starts, counts, strict=True)]
    )
    return Questions(
        ids=[questions.ids[i] for i in index],
        texts=[questions.texts[i] for i in index],
        inputs=[questions.inputs[i] for i in index],
        types=[questions.types[i] for i in index],
        answer_types=[questions.answer_types[i] for i in index],
        head=questions.head[index],
        tail=questions.tail[index],
        time=questions.time[index],
        is_time=questions.is_time[index],
        answer_offsets=torch.cat([torch.zeros(1, dtype=torch.long), counts.cumsum(0)]),
        answer_flat=flat,
        timeline=[questions.timeline[i] for i in index] if questions.timeline else [],
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=20_000)
    parser.add_argument("--questions", type=int, default=5_000)
    parser.add_argument("--rank", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--encoder", default="tiny")
    parser.add_argument("--question-input", default="question", choices=("question", "template"))
    args = parser.parse_args()

    from chronoprobe.kgqa.data import load_split, read_rows
    from chronoprobe.kgqa.encoder import build_encoder
    from chronoprobe.kgqa.evaluate import evaluate
    from chronoprobe.kgqa.models import build_qa_model

    device = torch.device(args.device)
    with tempfile.TemporaryDirectory() as tmp:
        began = time.perf_counter()
        cronq, vocab, entity, time_table = _world(args.facts, args.rank, Path(tmp))
        source = args.question_input
        texts = [row[source] for row in read_rows(cronq / "train.jsonl", source)]
        encoder = build_encoder(args.encoder, texts)
        setup = time.perf_counter() - began
        results = []
        for name in ("cronkgqa", "embedkgqa", "lm"):
            model = build_qa_model(name, encoder, entity, time_table, vocab.n_times).to(device)
            questions = _repeat(load_split(cronq, "test", vocab, source), args.questions)
            evaluate(model, _repeat(questions, args.batch_size), vocab, args.batch_size, device)
            _sync(device)  # warmed up
            # evaluate times its answering alone (results come back to the CPU, so the device
            # has finished), not the predictions table it writes after
            metrics, _ = evaluate(model, questions, vocab, args.batch_size, device)
            seconds = len(questions) / metrics["questions_per_s"]
            encode = _encoder_seconds(model, questions.inputs, args.batch_size, device)
            results.append(
                {
                    "model": name,
                    "questions": len(questions),
                    "candidates": vocab.size,
                    "seconds": round(seconds, 3),
                    "questions_per_s": round(len(questions) / seconds, 1),
                    "encoder_share": round(min(1.0, encode / seconds), 3),
                }
            )
    report = {
        "facts": args.facts,
        "rank": args.rank,
        "batch_size": args.batch_size,
        "device": str(device),
        "encoder": args.encoder,
        "question_input": source,
        "threads": torch.get_num_threads(),
        "setup_s": round(setup, 1),
        "results": results,
    }
    print(json.dumps(report, indent=2))


@torch.no_grad()
def _encoder_seconds(model, texts: list[str], batch_size: int, device: torch.device) -> float:
    """Tokenising and encoding alone, to say where the evaluation time goes."""
    began = time.perf_counter()
    for begin in range(0, len(texts), batch_size):
        model.encoder(model.encoder.tokenize(texts[begin : begin + batch_size], device))
    _sync(device)
    return time.perf_counter() - began


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


if __name__ == "__main__":
    main()
