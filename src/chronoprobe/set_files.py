"""The files of a probe-set folder: what the builders and importers write, and the views, the
trainers and the exporters read. One declaration for both sides, so a renamed file or a new
split is one edit here.
"""

from __future__ import annotations

EXAMPLES = "examples.jsonl"  # cloze rows: a query with one [MASK] and its answer labels
STATEMENTS = "statements.jsonl"  # LAMA-TK statements and dated statements
NAMES_FILE = "answer_names.jsonl"  # every answer's names, beside examples.jsonl
KG_RECORD = "kg.json"  # the KG a probe set was built from
# the fine-grained drift splits of a period against the one before it
DRIFT_SPLITS = ("unchanged", "updated", "new", "deleted")
