"""QA over a temporal KG: CronKGQA, EmbedKGQA and an LM-only baseline (see docs/cronq.md)."""
