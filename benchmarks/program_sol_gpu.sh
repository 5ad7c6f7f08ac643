#!/usr/bin/env bash
# The speed-of-light program view on a GPU with ncu (issue 28): the torch.compile'd GPT-2 training step
# (samples/gpt2_train.py, needs `transformers`) captured with --time on empty caches, Inductor's static
# launcher as torch has it; the program table ranked by headroom with each kernel's provenance (the
# model line), the counters of the 10 kernels with the most headroom beside their findings, the JSON and
# HTML report, the estimate-vs-ncu table for the top 10 by GPU time, and a second capture on the now warm
# caches (no autotuning: the Triton share of GPU time a user's second run sees). About 3 minutes on an
# H200 (the steps' timeouts allow 8). Run from the repository root; outputs go to $OUT (default /tmp/sol-out).
#
#     OUT=/tmp/sol-out bash benchmarks/program_sol_gpu.sh
set -uo pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-}
CACHES=$(mktemp -d /tmp/sol-caches.XXXXXX)        # the script's own, empty: the first capture compiles everything
export TORCHINDUCTOR_CACHE_DIR=$CACHES/inductor TRITON_CACHE_DIR=$CACHES/triton KINSPECT_CACHE_DIR=$CACHES/kinspect
OUT=${OUT:-/tmp/sol-out}
STORE=/tmp/sol-gpt2
WARM=/tmp/sol-gpt2-warm
mkdir -p "$OUT"
rm -rf "$STORE" "$WARM"
SECONDS=0
python3 -c "import torch, triton; from torch._inductor import config as c; print('torch', torch.__version__, 'triton', \
triton.__version__, torch.cuda.get_device_name(), 'static launcher', c.use_static_cuda_launcher)" | tee "$OUT/env.txt"
ncu --version | tail -1 | tee -a "$OUT/env.txt"

echo "[$SECONDS s] capture --time (empty caches)"
timeout 180 python3 -m kinspect capture --store "$STORE" --time -- python3 samples/gpt2_train.py --iters 5 \
    > "$OUT/capture.txt" 2>&1
echo "exit $?"; tail -9 "$OUT/capture.txt"

echo "[$SECONDS s] provenance: kernels that name a model line"
python3 - "$STORE" <<'EOF' 2>&1 | tee "$OUT/provenance.txt"
import sys
from kinspect.files import provenance
from kinspect.files.store import read_records
vs = [v for v in read_records(sys.argv[1]) if v.kernel.startswith("triton_") and v.ran]
origins = {v.kernel: provenance.read(v.path) for v in vs}
with_lines = {k: o for k, o in origins.items() if o is not None and o.lines}
print(f"{len(vs)} launched Inductor variants; {sum(o is not None for o in origins.values())} with an origin, "
      f"{len(with_lines)} kernels naming a model line")
for k, o in list(with_lines.items())[:5]:
    print(f"  {k}: {o.short()}  |  {o.lines[0].describe()}")
EOF

echo "[$SECONDS s] vec-report --counters 10: the table ranked by headroom, the top kernel's findings beside its counters"
timeout 200 python3 -m kinspect vec-report "$STORE" --top 1 --counters 10 > "$OUT/headroom.txt" 2> "$OUT/counters.err"
echo "exit $?"; head -80 "$OUT/headroom.txt"; tail -5 "$OUT/counters.err"
echo "[$SECONDS s] JSON (reads the counters measured above) and the HTML report"
timeout 60 python3 -m kinspect vec-report "$STORE" --top 0 --json > "$OUT/counters.json" 2> "$OUT/vecreport.err"
python3 - "$OUT/counters.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["speed_of_light"]
print("share", s.get("triton_share_of_gpu_time"), "window:", s.get("share_window"))
print(s["launch_floor_note"])
rows = [k for k in d["kernels"] if k["counters"]]
print(f"{len(rows)} kernels with counters; not measured: {[k['counters_failed'] for k in d['kernels'] if k['counters_failed']][:3]}")
EOF
timeout 120 python3 -m kinspect report "$STORE" --no-bench -o "$OUT/report.html" 2>&1 | tail -2

echo "[$SECONDS s] estimate vs ncu, top 10 by GPU time (replayed launches; those --counters measured are reused)"
timeout 150 python3 benchmarks/bytes_vs_ncu.py "$STORE" --run-ncu --top 10 2>&1 | tee "$OUT/bytes_vs_ncu.txt"

echo "[$SECONDS s] a second capture on the warm caches: no autotuning, the share a second run sees"
timeout 120 python3 -m kinspect capture --store "$WARM" --time -- python3 samples/gpt2_train.py --iters 5 \
    > "$OUT/capture_warm.txt" 2>&1
echo "exit $?"; tail -4 "$OUT/capture_warm.txt"
timeout 60 python3 -m kinspect vec-report "$WARM" --top 0 > "$OUT/headroom_warm.txt" 2>&1
head -14 "$OUT/headroom_warm.txt"

echo "[$SECONDS s] pruned stores for the record"
tar czf "$OUT/store.tgz" -C /tmp --exclude='*.cubin' --exclude='*.ptx' --exclude='*.ttgir' --exclude='*.ttir' \
    --exclude='*.source' "$(basename "$STORE")" "$(basename "$WARM")"
echo "[$SECONDS s] done"
