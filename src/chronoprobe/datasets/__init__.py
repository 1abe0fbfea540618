"""Probe-set builders: a TemporalKG in, JSONL probe rows out, one module per family."""
