#!/usr/bin/env bash
# Every GPU benchmark in one call, under 10 minutes on one H100, one JSON of figures:
#
#   benchmarks/gpu/run_all.sh --out gpu.json --templama train.jsonl val.jsonl \
#       --tokenizer DIR_WITH_SMOLLM2_TOKENIZER_JSON
#   benchmarks/gpu/run_all.sh --dry-run --out dry.json     # tiny sizes on the CPU, no vLLM
#
# Parts and what each compares: see run_all.py. Give the whole call a limit of about 11
# minutes: the parts' own limits add up to 9.5, so a failed call leaves time to run it again.
# Where Python packages are missing on the GPU machine and it has no network, download their
# wheels elsewhere (pip download --no-deps ...) into a folder, and pass it as --wheels DIR: they
# are installed into a folder of their own, first on PYTHONPATH, before anything runs.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
python="${PYTHON:-python3}"
args=()
while [ $# -gt 0 ]; do
    case "$1" in
        --wheels)
            site="$(mktemp -d)/site"
            "$python" -m pip install -q --no-index --no-deps --no-compile --target "$site" "$2"/*.whl
            export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
            shift 2 ;;
        *) args+=("$1"); shift ;;
    esac
done
export PYTHONPATH="$root/src${PYTHONPATH:+:$PYTHONPATH}"
exec "$python" "$here/run_all.py" "${args[@]}"
