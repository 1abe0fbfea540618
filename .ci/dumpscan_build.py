"""A pytest plugin: the dump loader uses the build of its scanner that DUMPSCAN_BUILD names.

    DUMPSCAN_BUILD=build/sanitize/sse2/_dumpscan....so PYTHONPATH=.ci:benchmarks \
        python -m pytest -p dumpscan_build tests/kg/io/test_dump_scanner.py

is how .ci/sanitize.sh runs the scanner's tests on its sanitizer build.
"""

import os

from fuzz_dumpscan import load_scanner  # in benchmarks/


def pytest_configure(config):
    load_scanner(os.environ["DUMPSCAN_BUILD"])

