"""Probe sets written for other tools: lm-evaluation-harness tasks (:mod:`.lm_eval`)."""
