#!/usr/bin/env bash
# The speed-of-light program view on a GPU with ncu (issue 28): the torch.compile'd GPT-2 training step
# (samples/gpt2_train.py, needs `transformers`) captured with --time, vec-report's JSON and terminal
# view, the counters of the 10 kernels with the most headroom, a table ranked by headroom with each
# kernel's provenance, and the estimate-vs-ncu table for the top 10 by GPU time. About 4 minutes on an H200
# with cold caches (the steps' timeouts allow more). Run from the repository root; outputs go to $OUT (default /tmp/sol-out).
#
#     OUT=/tmp/sol-out bash benchmarks/program_sol_gpu.sh
set -uo pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-}
export TORCHINDUCTOR_CACHE_DIR=${TORCHINDUCTOR_CACHE_DIR:-/tmp/sol-ind} TRITON_CACHE_DIR=${TRITON_CACHE_DIR:-/tmp/sol-tc}
OUT=${OUT:-/tmp/sol-out}
STORE=/tmp/sol-gpt2
mkdir -p "$OUT"
rm -rf "$STORE"
SECONDS=0
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, torch.cuda.get_device_name())"
ncu --version | tail -1

echo "[$SECONDS s] capture --time"
timeout 180 python3 -m kinspect capture -o "$STORE" --time -- python3 samples/gpt2_train.py --iters 5 \
    > "$OUT/capture.txt" 2>&1
tail -8 "$OUT/capture.txt"

echo "[$SECONDS s] vec-report --counters 10: the table ranked by headroom, counters beside findings"
timeout 150 python3 -m kinspect vec-report "$STORE" --top 1 --counters 10 > "$OUT/headroom.txt" 2> "$OUT/counters.err"
head -60 "$OUT/headroom.txt"; tail -3 "$OUT/counters.err"
echo "[$SECONDS s] JSON (reads the counters measured above) and the HTML report"
timeout 60 python3 -m kinspect vec-report "$STORE" --top 0 --json > "$OUT/counters.json" 2> "$OUT/vecreport.err"
python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['speed_of_light']['launch_floor_note'])" "$OUT/counters.json"
timeout 120 python3 -m kinspect report "$STORE" --no-bench -o "$OUT/report.html" 2>&1 | tail -2

echo "[$SECONDS s] estimate vs ncu, top 10 by GPU time (replayed launches; those --counters measured are reused)"
timeout 100 python3 benchmarks/bytes_vs_ncu.py "$STORE" --run-ncu --top 10 2>&1 | tee "$OUT/bytes_vs_ncu.txt"

echo "[$SECONDS s] pruned store for the record"
tar czf "$OUT/store.tgz" -C /tmp --exclude='*.cubin' --exclude='*.ptx' --exclude='*.ttgir' --exclude='*.ttir' \
    --exclude='*.source' "$(basename "$STORE")"
echo "[$SECONDS s] done"
