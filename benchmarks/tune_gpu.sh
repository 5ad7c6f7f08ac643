#!/usr/bin/env bash
# kinspect tune on a GPU (issue 32): the torch.compile'd GPT-2 training step (samples/gpt2_train.py, needs
# `transformers`) captured with --time, then `vec-report --tune 5`: the 5 kernels with the most headroom, each
# tuned on its captured launch (kinspect's candidates from its findings, Inductor's own configs and
# max_autotune's, compiled here in parallel, checked against the original's output and timed with do_bench),
# and the tune table (benchmarks/tune_table.py): original, kinspect's winner, max_autotune's pick, trials
# each, speedup with spread, reason.
#
# The whole script keeps within TOTAL seconds (default 530, for a 10-minute device command): the tune step
# gets what the capture leaves, less a reserve for the table, and each kernel's widening stops after BUDGET
# seconds (default: its share of that time). Each kernel's tune is stored as it ends, so a step cut by its
# limit still prints the rows it finished; the others say why they have none. Run from the repository root;
# outputs go to $OUT (default /tmp/tune-out).
#
#     OUT=/tmp/tune-out bash benchmarks/tune_gpu.sh
set -uo pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-}
export TORCHINDUCTOR_CACHE_DIR=${TORCHINDUCTOR_CACHE_DIR:-/tmp/tune-ind} TRITON_CACHE_DIR=${TRITON_CACHE_DIR:-/tmp/tune-tc}
OUT=${OUT:-/tmp/tune-out}
STORE=/tmp/tune-gpt2
TRIALS=${TRIALS:-6}
KERNELS=${KERNELS:-5}
TOTAL=${TOTAL:-530}
RESERVE=45           # the table and each kernel's details, after the tune step
mkdir -p "$OUT"
rm -rf "$STORE"
SECONDS=0
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, torch.cuda.get_device_name())"

echo "[$SECONDS s] capture --time"
timeout 200 python3 -m kinspect capture --store "$STORE" --time -- python3 samples/gpt2_train.py --iters 5 \
    > "$OUT/capture.txt" 2>&1
tail -4 "$OUT/capture.txt"

LEFT=$((TOTAL - RESERVE - SECONDS))
# the program view first (about 30 s), then each kernel: its first round is not cut, its widening is
BUDGET=${BUDGET:-$(( (LEFT - 30) / KERNELS - 20 ))}
[ "$BUDGET" -lt 15 ] && BUDGET=15
echo "[$SECONDS s] vec-report --tune $KERNELS --trials $TRIALS --budget $BUDGET (the step stops after $LEFT s)"
timeout "$LEFT" python3 -m kinspect vec-report "$STORE" --top 0 --tune "$KERNELS" --trials "$TRIALS" \
    --budget "$BUDGET" --json > "$OUT/tune.json" 2> "$OUT/tune.progress"
rc=$?
echo "rc=$rc$([ $rc = 124 ] && echo ' (cut by its time limit)') ($(wc -l < "$OUT/tune.progress") progress lines in tune.progress)"
grep -E "^tune: |^tuning |^  tuned in|^not tuned" "$OUT/tune.progress" | cut -c1-160

echo "[$SECONDS s] the tune table"
timeout $((TOTAL + 40 - SECONDS)) python3 benchmarks/tune_table.py "$STORE" -n "$KERNELS" --json "$OUT/tune.json" \
    --progress "$OUT/tune.progress" --details "$OUT/tune_details.txt" 2>&1 | tee "$OUT/tune_table.txt"
echo "[$SECONDS s] done"
