"""The adapter families, by name: one class each, imported when a model of that family loads.

Adding a family is one module with a :class:`~chronoprobe.models.base.LanguageModel` subclass
and one ``ADAPTERS.add`` (or an entry here for a built-in one).
"""

from __future__ import annotations

from chronoprobe.registry import Registry

ADAPTERS: Registry[type] = Registry(
    "model family",
    {
        "masked": "chronoprobe.models.masked:MaskedLM",
        "causal": "chronoprobe.models.causal:CausalLM",
        "seq2seq": "chronoprobe.models.seq2seq:Seq2SeqLM",
        "symbolic": "chronoprobe.train.lamatk.symbolic:SymbolicLM",
    },
)
