"""The probe families: each one's names, paper, docs page and the registry entries it is made of.

A family's parts are registered where they are written (its builders in ``datasets``, its
views in ``probes``, its trainers' step kinds in ``train``, ``tkg`` or ``kgqa``, its report
sections in ``report``); this table names them, so that one place says what a family is and
``chronoprobe list`` can show it whole. A test holds it to the registries: every part it names
is registered, and every registered builder, importer, view, step kind and model belongs to
exactly one family or is shared by all. Nothing here imports the parts.

A plugin may add a family of its own: ``FAMILIES.add("teams", Family("teams", ...))``.
"""

from __future__ import annotations

from dataclasses import dataclass

from chronoprobe.registry import Registry


@dataclass(frozen=True)
class Family:
    """A probe family: the names it goes by, the paper it follows, its docs pages and the names
    of its parts in the registries (``models``: TKG, QA or language-model adapter names)."""

    name: str
    title: str
    paper: str
    docs: tuple[str, ...]
    aliases: tuple[str, ...] = ()
    builders: tuple[str, ...] = ()
    importers: tuple[str, ...] = ()
    views: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()  # its own step kinds: trainers and evaluators
    models: tuple[str, ...] = ()

    @property
    def description(self) -> str:
        """What ``FAMILIES.describe`` says of it."""
        return f"{self.title} ({self.paper})"

    def sections(self, known: list[str]) -> list[str]:
        """The report sections of ``known`` (section keys) that draw this family's steps."""
        own = {*self.kinds, *(f"build:{b}" for b in self.builders)}
        own |= {f"probe:{v}" for v in self.views}
        return [key for key in known if key in own]


FAMILIES: Registry[Family] = Registry("family")

# the step kinds every family's parts run under, and the model adapters any family's views ask
SHARED_KINDS = ("kg", "build", "import", "probe", "report", "lm-eval")
SHARED_MODELS = ("masked", "causal", "seq2seq")

for family in (
    Family(
        "lamatk",
        "LAMA-TK",
        "Zhao et al., Can Language Models Serve as Temporal Knowledge Bases?, Findings of "
        "EMNLP 2022",
        ("docs/lamatk.md",),
        builders=("lamatk",),
        views=("recite",),
        kinds=("memorize", "pretrain"),
        models=("symbolic",),
    ),
    Family(
        "drift",
        "Drift (DynamicTempLAMA, TempLAMA)",
        "Margatina et al., Dynamic Benchmarking of Masked Language Models on Temporal Concept "
        "Drift with Multiple Views, Findings of EACL 2023; Dhingra et al., Time-Aware Language "
        "Models as Temporal Knowledge Bases, TACL 2022",
        ("docs/drift.md",),
        aliases=("series", "cloze"),
        builders=("drift",),
        importers=("templama", "dynamic-templama"),
        views=("single-token", "multi-token", "pll"),
        kinds=("series",),
    ),
    Family(
        "cronq",
        "CronQuestions (temporal KG embeddings and QA)",
        "Saxena et al., Question Answering Over Temporal Knowledge Graphs, ACL 2021",
        ("docs/cronq.md", "docs/tkg.md"),
        aliases=("kgqa", "tkg"),
        builders=("cronq",),
        importers=("cronquestions",),
        kinds=("tkg", "tkg-eval", "kgqa", "kgqa-eval"),
        models=("complex", "tcomplex", "tntcomplex", "timeplex", "cronkgqa", "embedkgqa", "lm"),
    ),
    Family(
        "ecbd",
        "ECBD (Entity Cloze By Date)",
        "Onoe et al., Entity Cloze By Date: What LMs Know About Unseen Entities, Findings of "
        "NAACL 2022",
        ("docs/ecbd.md",),
        aliases=("span-ppl",),
        builders=("ecbd",),
        importers=("ecbd", "ecbd-ekp"),
        views=("span-ppl",),
    ),
    Family(
        "generative",
        "Generative (ChroKnowledge, TimeStress)",
        "Park et al., ChroKnowledge, arXiv 2024; Ammar Khodja et al., Factual Knowledge in "
        "Language Models: Robustness and Anomalies under Simple Temporal Context Variations, "
        "ACL 2025",
        ("docs/generative.md",),
        aliases=("generate", "dates"),
        builders=("dates",),
        views=("generate", "date-context", "judge-agreement"),
    ),
    Family(
        "timeline",
        "TimelineKGQA",
        "Sun et al., TimelineKGQA: A Comprehensive Question-Answer Pair Generator for Temporal "
        "Knowledge Graphs, WWW 2025 Companion",
        ("docs/timeline.md",),
        builders=("timeline", "timeline-oracle"),
    ),
    Family(
        "cutoff",
        "Effective knowledge cutoffs (Dated Data)",
        "Cheng et al., Dated Data: Tracing Knowledge Cutoffs in Large Language Models, COLM 2024",
        ("docs/cutoff.md",),
        views=("cutoff", "doc-cutoff"),
    ),
):
    FAMILIES.add(family.name, family)


def family_named(name: str) -> Family:
    """The family called ``name`` or one of its aliases (``tkg`` is CronQuestions')."""
    for _, family in FAMILIES.items():
        if name == family.name or name in family.aliases:
            return family
    return FAMILIES.get(name)  # the KeyError names the families there are
