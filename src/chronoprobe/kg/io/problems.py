"""Bad-input accounting shared by every loader.

A loader calls :meth:`Problems.report` for each record it cannot use. In strict mode the first
one raises :class:`BadRecord` naming file, line and reason; otherwise records are skipped and
counted by reason, and the counts (with a first example of each) are printed at the end, so
nothing is dropped silently. :meth:`Problems.warn` notes what is read but read on an assumption
the user should know about (a date without its precision, say).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from chronoprobe.errors import UserError


class BadRecord(UserError):
    """A record a loader cannot use, located as file:line."""

    def __init__(self, file: str, line: int, reason: str) -> None:
        super().__init__(f"{file}:{line}: {reason}")
        self.file, self.line, self.reason = file, line, reason


@dataclass
class Problems:
    strict: bool = False
    counts: Counter = field(default_factory=Counter)
    examples: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def report(self, file: str, line: int, reason: str, kind: str | None = None) -> None:
        """Record one bad record; ``kind`` groups the count (defaults to the reason)."""
        if self.strict:
            raise BadRecord(file, line, reason)
        key = kind or reason
        self.counts[key] += 1
        self.examples.setdefault(key, f"{file}:{line}: {reason}")

    def counted(self, kind: str, times: int = 1) -> None:
        """Count ``times`` more problems of a ``kind`` already reported (with its example):
        the cheap path for bad records past those described, such as the same bad line again
        and again."""
        self.counts[kind] += times
        self.examples.setdefault(kind, "not described")

    def warn(self, file: str, line: int, message: str) -> None:
        """Note an assumption made in reading (printed, never fatal); each message once."""
        warning = f"{file}:{line}: {message}"
        if warning not in self.warnings:
            self.warnings.append(warning)

    def merge(self, other: Problems) -> None:
        """Fold in the problems a worker process counted."""
        self.counts.update(other.counts)
        for key, example in other.examples.items():
            self.examples.setdefault(key, example)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def summary(self) -> list[str]:
        """One line per kind of problem, most frequent first, with its first example."""
        return [
            f"{count:>9,}  {key}  (first: {self.examples[key]})"
            for key, count in self.counts.most_common()
        ]
