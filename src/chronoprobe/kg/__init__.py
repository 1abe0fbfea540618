"""The temporal knowledge graph: records, the columnar TemporalKG, loaders, the synthetic world."""

from chronoprobe.kg.graph import KGBuilder, KGFormatError, TemporalKG
from chronoprobe.kg.records import Entity, Fact, Relation

__all__ = ["Entity", "Fact", "KGBuilder", "KGFormatError", "Relation", "TemporalKG"]
