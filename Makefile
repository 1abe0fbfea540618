# The two set-up commands of the README (`make demo`, `make test`). Both build .venv from
# nothing when it is missing, installing exactly what lock/ holds: the whole environment CI
# tested, each extra below included. pyproject.toml keeps ranges (a library does not pin its
# users); `make lock` resolves them again into lock/, `make test-latest` and `make test-oldest`
# run the suite on the newest and the oldest versions the ranges allow.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
UV := $(BIN)/uv
STAMP := $(VENV)/.installed
DEMO_OUT ?= runs/demo

# The extras the environment holds, one word each: the lock, test-latest and test-oldest cover
# them all. dev: pytest, ruff, uv and setuptools (the wheel test builds offline); ray: the
# tests start a local Ray instance (--engine ray); serve: a transformers serve server (served
# models); lm-eval: exported tasks run in it.
EXTRAS := dev ray serve lm-eval
# Where wheels that are not on the package registry lie: the CPU build of torch on this
# machine's disk, and wheels built here from source distributions (.wheels/, git-ignored).
FIND_LINKS := $(foreach d,/opt/wheels .wheels,$(if $(wildcard $(d)),--find-links $(d)))
# The lock: the environment (lock/requirements.txt, from pyproject.toml and EXTRAS) and the
# packages installed without their dependency trees (lock/no-deps.txt, from lock/no-deps.in).
REQUIREMENTS ?= lock/requirements.txt
NO_DEPS := lock/no-deps.txt
RESOLVE := $(UV) pip compile --quiet --python-version 3.11 --python-platform x86_64-manylinux_2_28 \
	$(FIND_LINKS) --constraints lock/constraints.txt --custom-compile-command 'make lock'

.PHONY: demo test test-latest test-oldest lock sanitize lint bench clean

# uv itself comes from the lock (the dev extra pins it), installed by the venv's own pip.
$(UV):
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --disable-pip-version-check -q "$$(grep -m1 '^uv==' lock/requirements.txt)"

# Exactly the lock (anything else in the venv is removed), then chronoprobe itself, editable,
# built with the locked setuptools: nothing comes from outside the lock and this file.
$(STAMP): $(UV) $(REQUIREMENTS) $(NO_DEPS) pyproject.toml src/chronoprobe/kg/io/_dumpscan.c
	$(UV) pip sync --quiet --python $(BIN)/python $(FIND_LINKS) $(REQUIREMENTS) $(NO_DEPS)
	$(UV) pip install --quiet --python $(BIN)/python --no-deps --no-build-isolation -e .
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/chronoprobe run experiments/demo.yaml --out $(DEMO_OUT)

test: $(STAMP)
	# the report's browser test needs Debian's chromium; installed here when missing
	sh tests/report/ensure_chromium.sh
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/pytest -q
	$(MAKE) sanitize VENV=$(VENV)

# Resolve pyproject.toml's ranges again into lock/: the newest versions they allow, or, with
# `make lock UPGRADE=`, the locked versions wherever they still fit (to add an extra alone).
UPGRADE ?= --upgrade
lock: $(UV)
	$(RESOLVE) $(UPGRADE) pyproject.toml $(addprefix --extra ,$(EXTRAS)) -o lock/requirements.txt
	$(RESOLVE) $(UPGRADE) --no-deps lock/no-deps.in -o $(NO_DEPS)

# The suite on the newest versions the ranges allow, and on the oldest (each direct dependency
# at its lower bound), each in a venv of its own under build/; the lock is left as it is.
test-latest: $(UV)
	mkdir -p build/latest
	$(RESOLVE) --upgrade pyproject.toml $(addprefix --extra ,$(EXTRAS)) -o build/latest/requirements.txt
	$(MAKE) test VENV=build/latest/venv REQUIREMENTS=build/latest/requirements.txt

test-oldest: $(UV)
	mkdir -p build/oldest
	$(RESOLVE) --upgrade --resolution lowest-direct pyproject.toml $(addprefix --extra ,$(EXTRAS)) \
		-o build/oldest/requirements.txt
	$(MAKE) test VENV=build/oldest/venv REQUIREMENTS=build/oldest/requirements.txt

# The compiled dump scanner built with AddressSanitizer and UndefinedBehaviorSanitizer, SSE2
# and portable, its tests run and each build fuzzed against the msgspec parser for a bounded
# time (about two minutes; see .ci/sanitize.sh and docs/wikidata-dump.md).
sanitize: $(STAMP)
	PYTHON=$(BIN)/python sh .ci/sanitize.sh

lint: $(STAMP)
	$(BIN)/ruff check --fix src tests benchmarks
	$(BIN)/ruff format src tests benchmarks

clean:
	rm -rf $(VENV) runs build/latest build/oldest
