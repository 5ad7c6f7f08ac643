#!/usr/bin/env bash
# kinspect diff of two runs of one program on a GPU (issue 41): the torch.compile'd TransformerEncoderLayer
# (samples/torch_compile_capture.py, forward + backward) captured with --time twice, with Inductor's
# max_autotune off (A) and on (B), each with its own empty Triton and Inductor caches; then
# `kinspect diff A B`: the kernels matched across the two captures (by name and source, renumbered ones by
# their origin), ranked by GPU time lost per step, the story and stage diffs of the top regression, and
# the same as JSON. MODE=config captures B with one kernel's config changed instead (TORCHINDUCTOR
# coordinate descent tuning on), which compiles faster than max_autotune.
#
#     OUT=/tmp/rundiff bash benchmarks/program_diff_gpu.sh
#
# Success: both captures end "program ok"-like (torch.compile output matches eager), and the diff prints
# two headers (Triton/torch versions, device, step GPU time), one table (lost ms/step first column of
# figures, the first row the kernel losing the most), a paragraph naming that kernel, and its stage diffs.
set -uo pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-}
OUT=${OUT:-/tmp/rundiff}
ITERS=${ITERS:-20}
MODE=${MODE:-autotune}
rm -rf "$OUT"
mkdir -p "$OUT"
SECONDS=0
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__, torch.cuda.get_device_name())"
for side in a b; do
    env=(TORCHINDUCTOR_CACHE_DIR="$OUT/ind-$side" TRITON_CACHE_DIR="$OUT/tc-$side")
    if [ "$side" = b ]; then
        if [ "$MODE" = config ]; then env+=(TORCHINDUCTOR_COORDINATE_DESCENT_TUNING=1); else env+=(TORCHINDUCTOR_MAX_AUTOTUNE=1); fi
    fi
    echo "[$SECONDS s] capture $side (${env[*]})"
    env "${env[@]}" python3 -m kinspect capture --store "$OUT/$side" --time -- \
        python3 samples/torch_compile_capture.py --iters "$ITERS" 2>&1 | tail -4
done
echo "[$SECONDS s] diff"
python3 -m kinspect diff "$OUT/a" "$OUT/b" --json > "$OUT/diff.json"
python3 -m kinspect diff "$OUT/a" "$OUT/b" | head -160
python3 - "$OUT/diff.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
print("kernels:", len(d["kernels"]), "matches:", {m: sum(k["match"].split(" (")[0] == m for k in d["kernels"])
                                                  for m in sorted({k["match"].split(" (")[0] for k in d["kernels"]})})
print("step GPU ms A, B:", d["a"]["step_gpu_ms"], d["b"]["step_gpu_ms"], "steps", d["a"]["steps"], d["b"]["steps"])
EOF
echo "[$SECONDS s] done"
