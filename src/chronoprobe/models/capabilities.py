"""What an adapter can do beyond the requests every one answers, as typed protocols.

A caller asks ``isinstance(model, Protocol)`` instead of probing for attributes by name: the
protocol names the capability, its methods' signatures, and where it is documented.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class ReportsUsage(Protocol):
    """A model answered by a server: what it was asked, and what the server said it was (the
    ``served`` record of metrics.json: requests, retries, tokens, cost)."""

    def record(self) -> dict: ...


@runtime_checkable
class AnswersAsTheyCome(Protocol):
    """A model that hands each answer to ``keep(index, answer)`` as it arrives (a served
    model), so the answer cache stores it at once and a killed run pays for nothing twice."""

    answers_as_they_come: bool


@runtime_checkable
class CountsReused(Protocol):
    """A model that counts the answers the answer cache gave in its place (its usage record
    then says how many requests were not sent)."""

    def reused(self, answers: Sequence[Any]) -> None: ...


@runtime_checkable
class RanksSymbols(Protocol):
    """A model that predicts symbols (entity ids, years) rather than words: LAMA-TK's symbolic
    masked LM, the one the recite view ranks."""

    def symbol(self, slot: str, value: str) -> int | None: ...
