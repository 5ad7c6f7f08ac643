#!/usr/bin/env bash
# kinspect tune on a GPU (issue 32): the torch.compile'd GPT-2 training step (samples/gpt2_train.py, needs
# `transformers`) captured with --time, then `vec-report --tune 5`: the 5 kernels with the most headroom, each
# tuned on its captured launch (kinspect's candidates from its findings, Inductor's own configs and
# max_autotune's, all compiled here in parallel, checked against the original's output and timed with
# do_bench), and the tune table: original, kinspect's winner, max_autotune's pick, trials each, speedup with
# spread, reason. About 5 minutes on an H200 with cold caches. Run from the repository root; outputs go to
# $OUT (default /tmp/tune-out).
#
#     OUT=/tmp/tune-out bash benchmarks/tune_gpu.sh
set -uo pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-}
export TORCHINDUCTOR_CACHE_DIR=${TORCHINDUCTOR_CACHE_DIR:-/tmp/tune-ind} TRITON_CACHE_DIR=${TRITON_CACHE_DIR:-/tmp/tune-tc}
OUT=${OUT:-/tmp/tune-out}
STORE=/tmp/tune-gpt2
TRIALS=${TRIALS:-6}
mkdir -p "$OUT"
rm -rf "$STORE"
SECONDS=0
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, torch.cuda.get_device_name())"

echo "[$SECONDS s] capture --time"
timeout 200 python3 -m kinspect capture --store "$STORE" --time -- python3 samples/gpt2_train.py --iters 5 \
    > "$OUT/capture.txt" 2>&1
tail -4 "$OUT/capture.txt"

echo "[$SECONDS s] vec-report --tune 5 --trials $TRIALS"
timeout 360 python3 -m kinspect vec-report "$STORE" --top 0 --tune 5 --trials "$TRIALS" --json \
    > "$OUT/tune.json" 2> "$OUT/tune.progress"
echo "rc=$? ($(wc -l < "$OUT/tune.progress") progress lines in tune.progress)"

echo "[$SECONDS s] the tune table"
python3 - "$OUT/tune.json" <<'PY' | tee "$OUT/tune_table.txt"
import json, sys
from kinspect.analysis.summary import display_name
d = json.load(open(sys.argv[1]))
print(f"{'kernel':44} {'ran µs':>8} {'kinspect':>30} {'µs':>8} {'n':>3} {'max_autotune':>30} {'µs':>8} {'n':>3} "
      f"{'speedup':>13} {'vs max-at':>13}  reason")
for t in d.get("tune", []):
    if "error" in t:
        print(f"{display_name(t['kernel']):44} not tuned: {t['error'][:150]}")
        continue
    s = t["summary"]
    f = lambda x: "-" if x is None else f"{x:.1f}"
    print(f"{display_name(s['kernel']):44} {f(s['original_us']):>8} {s['winner'] or '-':>30} {f(s['winner_us']):>8} "
          f"{s['kinspect_trials']:>3} {s['max_autotune'] or '-':>30} {f(s['max_autotune_us']):>8} "
          f"{s['max_autotune_trials']:>3} {s['speedup'] or '-':>13} {s['vs_max_autotune'] or '-':>13}  {s['reason'][:160]}")
print()
for t in d.get("tune", []):
    for n in t.get("notes", []):
        print(f"note ({display_name(t['kernel'])}): {n}")
PY
echo "[$SECONDS s] each kernel's tune as kinspect prints it"
for k in $(python3 -c "import json,sys; [print(t['kernel']) for t in json.load(open('$OUT/tune.json')).get('tune', []) if 'error' not in t]"); do
    timeout 30 python3 - "$STORE" "$k" <<'PY' >> "$OUT/tune_details.txt" 2>&1
import sys
from kinspect import api
from kinspect.render.tune import render
from kinspect.store import read_records
v = next(v for v in read_records(sys.argv[1]) if v.kernel == sys.argv[2] and api.tuned(v) is not None)
print(render(*api.tuned(v)), "\n")
PY
done
head -60 "$OUT/tune_details.txt"
echo "[$SECONDS s] done"
