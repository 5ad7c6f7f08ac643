#!/usr/bin/env bash
# The speed-of-light program view on a GPU with ncu (issue 28): the torch.compile'd GPT-2 training step
# (samples/gpt2_train.py, needs `transformers`) captured with --time, vec-report's JSON and terminal
# view, the counters of the 10 kernels with the most headroom, a table ranked by headroom with each
# kernel's provenance, and the estimate-vs-ncu table for the top 10 by GPU time. At most 10 minutes (the
# steps' timeouts), about 5 on an H200 with cold caches. Run from the repository root; outputs go to $OUT (default /tmp/sol-out).
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
timeout 210 python3 -m kinspect capture -o "$STORE" --time -- python3 samples/gpt2_train.py --iters 5 \
    > "$OUT/capture.txt" 2>&1
tail -8 "$OUT/capture.txt"

echo "[$SECONDS s] vec-report (terminal and JSON)"
timeout 90 python3 -m kinspect vec-report "$STORE" --top 1 > "$OUT/vecreport.txt" 2>&1; head -45 "$OUT/vecreport.txt"
timeout 60 python3 -m kinspect vec-report "$STORE" --top 0 --json > "$OUT/vecreport.json" 2> "$OUT/vecreport.err"

echo "[$SECONDS s] vec-report --counters 10"
timeout 150 python3 -m kinspect vec-report "$STORE" --top 0 --counters 10 --json > "$OUT/counters.json" \
    2> "$OUT/counters.err"; tail -3 "$OUT/counters.err"

echo "[$SECONDS s] ranked by headroom, with provenance and counters"
python3 - "$OUT/counters.json" <<'EOF' | tee "$OUT/headroom.txt"
import json, sys
from kinspect.analysis.summary import display_name
from kinspect.render.counters import section
d = json.load(open(sys.argv[1]))
sol = d["speed_of_light"]
rows = {k["kernel"]: k for k in d["kernels"]}
print(f"{sol['ceilings_note']}")
print(f"program: GPU {sol['gpu_ms']:.3f} ms, ideal {sol['ideal_ms'] or 0:.3f} ms, headroom {sol['headroom_ms'] or 0:.3f} ms")
if sol.get("triton_share_of_gpu_time") is not None:
    others = ", ".join(f"{k['name'][:50]} {k['ms']:.2f} ms" for k in sol["largest_other_kernels"][:3])
    print(f"Triton kernels: {100 * sol['triton_share_of_gpu_time']:.1f}% of the GPU time the profiler saw; largest others: {others}")
print(f"{'#':>2} {'kernel':44} {'GPU ms':>7} {'ideal':>7} {'headroom':>8} {'MB/call':>8} {'GB/s':>6} {'%bw':>4}  where  | top finding")
for i, k in enumerate(sol["ranked_by_headroom"][:15], 1):
    r = rows[k]
    p = r.get("provenance", {})
    where = p.get("short") or p.get("status", "-")
    top = (r.get("top_finding") or {}).get("text", "-")[:60]
    print(f"{i:>2} {display_name(k):44} {r['gpu_ms']:7.3f} {r['ideal_ms'] or 0:7.3f} {r['headroom_ms'] or 0:8.3f} "
          f"{(r['bytes_per_call'] or 0) / 1e6:8.1f} {r['gb_per_s'] or 0:6.0f} {r['pct_of_bandwidth'] or 0:4.0f}  {where} | {top}")
    for line in p.get("lines", [])[:2]:
        print(f"     {line[:150]}")
print()
print(section(d))
EOF

echo "[$SECONDS s] estimate vs ncu, top 10 by GPU time (replayed launches; those --counters measured are reused)"
timeout 100 python3 benchmarks/bytes_vs_ncu.py "$STORE" --run-ncu --top 10 2>&1 | tee "$OUT/bytes_vs_ncu.txt"

echo "[$SECONDS s] pruned store for the record"
tar czf "$OUT/store.tgz" -C /tmp --exclude='*.cubin' --exclude='*.ptx' --exclude='*.ttgir' --exclude='*.ttir' \
    --exclude='*.source' "$(basename "$STORE")"
echo "[$SECONDS s] done"
