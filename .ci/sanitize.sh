#!/bin/sh
# The compiled dump scanner under AddressSanitizer and UndefinedBehaviorSanitizer (`make
# sanitize`, part of `make test`): built twice into build/sanitize/, with the SSE2 string scan
# and the portable one; the scanner's tests run on the first build, and each build is fuzzed
# against the msgspec parser (benchmarks/fuzz_dumpscan.py) for a bounded time. Any sanitizer
# report, difference or exception fails it; about two minutes on two idle cores. Needs gcc
# with its sanitizer runtimes (Debian's gcc has them) and Python's headers, which building the
# scanner needs anyway. SANITIZE_SEED, SANITIZE_CASES and SANITIZE_SECONDS change the fuzz.
set -eu
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}
CC=${CC:-gcc}
SEED=${SANITIZE_SEED:-1}
SECONDS_EACH=${SANITIZE_SECONDS:-45} # the cases of a seed are fixed; time only cuts them short
CASES=${SANITIZE_CASES:-4000}
OUT=build/sanitize

if ! command -v "$CC" >/dev/null 2>&1; then
    echo "sanitize: no C compiler $CC (Debian: apt-get install gcc)" >&2
    exit 1
fi
include=$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_path("include"))')
suffix=$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
libasan=$("$CC" -print-file-name=libasan.so)
if [ ! -f "$include/Python.h" ]; then
    echo "sanitize: no Python.h in $include: install Python's headers (Debian: python3-dev)" >&2
    exit 1
fi
case "$libasan" in
/*) ;;
*)
    echo "sanitize: $CC has no AddressSanitizer runtime (libasan.so); Debian's gcc has one" >&2
    exit 1
    ;;
esac
if "$CC" -dM -E - </dev/null | grep -q __SSE2__; then sse2_run=16; else sse2_run=8; fi

flags="-shared -fPIC -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined"
flags="$flags -fno-sanitize-recover=all -Wall -Wextra -Werror"
for variant in sse2 portable; do
    mkdir -p "$OUT/$variant"
    build="$OUT/$variant/_dumpscan$suffix"
    if [ "$variant" = portable ]; then macro=-DDUMPSCAN_PORTABLE run=8; else macro= run=$sse2_run; fi
    # shellcheck disable=SC2086 # flags and macro are word lists
    "$CC" $flags $macro -I"$include" src/chronoprobe/kg/io/_dumpscan.c -o "$build"
    # The interpreter is not instrumented: the runtime is preloaded. Python's allocator hands
    # out malloc'd memory, so that the sanitizer sees where each buffer ends; Python leaves
    # some memory to the end of the process by design, so leaks are not looked for.
    export LD_PRELOAD="$libasan" PYTHONMALLOC=malloc
    export ASAN_OPTIONS=detect_leaks=0:halt_on_error=1:exitcode=86
    export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:exitcode=87
    if [ "$variant" = sse2 ]; then
        echo "sanitize: the scanner's tests on the $variant build"
        DUMPSCAN_BUILD="$build" PYTHONPATH=".ci:benchmarks${PYTHONPATH:+:$PYTHONPATH}" \
            "$PYTHON" -m pytest -q -p no:cacheprovider \
            -p dumpscan_build tests/kg/io/test_dump_scanner.py
    fi
    echo "sanitize: the $variant build fuzzed, seed $SEED, up to $CASES blocks or $SECONDS_EACH s"
    "$PYTHON" benchmarks/fuzz_dumpscan.py --scanner "$build" --run "$run" --seed "$SEED" \
        --cases "$CASES" --seconds "$SECONDS_EACH" --save "$OUT/$variant/failing-line.json"
    unset LD_PRELOAD PYTHONMALLOC ASAN_OPTIONS UBSAN_OPTIONS
done
