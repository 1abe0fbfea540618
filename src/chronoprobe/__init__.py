"""chronoprobe: measure and build time-scoped knowledge in language models."""

__version__ = "0.4.0"
