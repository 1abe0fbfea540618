"""Metrics as pure functions over predictions and gold answers, shared by every family."""
