#!/usr/bin/env bash
# Issue 40 on a GPU host: programs as people run them, captured with `kinspect capture --time`.
#   1. a kernel library's program: a Llama step with Liger-Kernel's Triton kernels patched in (no
#      torch.compile): its table names the user's call sites (the model's lines), not "(own source)";
#   2. two ranks: the torch.compile'd Llama under torchrun --nproc_per_node 2 with DDP, cold caches
#      (Inductor autotunes): per-rank GPU ms, the slowest rank, NCCL's line; the header's "others" hold no
#      autotuning fills (kept apart as autotuning); no kernel above 100% of a ceiling; variants explained.
# Runs from the repository root. Liger-Kernel comes as a wheel in .whl/ (the GPU host has no registry):
#     pip download --no-deps -d .whl liger-kernel==0.8.5
#     OUT=/tmp/p40 bash benchmarks/programs_gpu.sh
set -uo pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
OUT=${OUT:-/tmp/p40}
CACHES=$(mktemp -d /tmp/p40-caches.XXXXXX)
export TORCHINDUCTOR_CACHE_DIR=$CACHES/inductor TRITON_CACHE_DIR=$CACHES/triton KINSPECT_CACHE_DIR=$CACHES/kinspect
mkdir -p "$OUT"
SECONDS=0
pip install -q --no-deps --no-index .whl/liger_kernel-*.whl 2>&1 | tail -1
NGPU=$(python3 -c "import torch; print(torch.cuda.device_count())")
echo "GPUs: $NGPU; $(python3 -c 'import torch, triton; print(torch.__version__, triton.__version__, torch.cuda.get_device_name())')"

echo "[$SECONDS s] 1. Liger-patched Llama, capture --time"
rm -rf /tmp/p40-liger
timeout 240 python3 -m kinspect capture --store /tmp/p40-liger --time -- \
    python3 benchmarks/programs/llama_step.py --liger --steps 5 > "$OUT/liger-capture.txt" 2>&1
echo "exit $?"; tail -4 "$OUT/liger-capture.txt"
COLUMNS=200 timeout 120 python3 -m kinspect vec-report /tmp/p40-liger --top 3 > "$OUT/liger-table.txt" 2>&1
head -30 "$OUT/liger-table.txt"
timeout 120 python3 -m kinspect vec-report /tmp/p40-liger --json > "$OUT/liger.json" 2>/dev/null

echo "[$SECONDS s] 2. torch.compile'd Llama, DDP on 2 ranks, cold caches, capture --time"
rm -rf /tmp/p40-ddp
timeout 420 python3 -m kinspect capture --store /tmp/p40-ddp --time -- \
    torchrun --nproc_per_node 2 benchmarks/programs/llama_step.py --compile --steps 5 > "$OUT/ddp-capture.txt" 2>&1
echo "exit $?"; tail -4 "$OUT/ddp-capture.txt"
COLUMNS=220 timeout 180 python3 -m kinspect vec-report /tmp/p40-ddp --top 2 > "$OUT/ddp-table.txt" 2>&1
head -40 "$OUT/ddp-table.txt"
timeout 180 python3 -m kinspect vec-report /tmp/p40-ddp --json > "$OUT/ddp.json" 2>/dev/null
COLUMNS=220 timeout 120 python3 -m kinspect vec-report /tmp/p40-ddp --rank 1 --top 0 > "$OUT/ddp-rank1.txt" 2>&1
head -8 "$OUT/ddp-rank1.txt"

echo "[$SECONDS s] checks"
python3 - "$OUT" <<'EOF'
import json, sys
out = sys.argv[1]
for name in ("liger", "ddp"):
    try:
        d = json.load(open(f"{out}/{name}.json"))
    except Exception as e:
        print(name, "no JSON:", e); continue
    ks = d["kernels"]
    sol = d.get("speed_of_light") or {}
    above = [k["kernel"] for k in ks if (k.get("pct_of_bandwidth") or 0) > 100 or (k.get("pct_of_peak") or 0) > 100]
    l2 = [k["kernel"] for k in ks if k.get("bandwidth_ceiling") in ("L2", "L2 and DRAM")]
    sites = {k["kernel"]: k["call_sites"][0]["site"] for k in ks if k.get("call_sites")}
    expl = {k["kernel"]: [w["differs"] for w in k["variants_explained"]] for k in ks if k.get("variants_explained")}
    fills = [o["name"] for o in (sol.get("largest_other_kernels") or []) if "FillFunctor" in o["name"]]
    print(f"{name}: {len(ks)} kernels; above 100% of a ceiling: {above or 'none'}; held to the L2: {len(l2)}; "
          f"fills among the others: {fills or 'none'}; tuning kept apart: {sol.get('tuning_gpu_ms')} ms "
          f"({[o['name'][:50] for o in (sol.get('tuning_other_kernels') or [])][:2]}); "
          f"communication: {[o['name'][:40] for o in (sol.get('communication_kernels') or [])]}")
    print(f"  ranks: {sol.get('ranks')}")
    print(f"  recompiled while running: {list((sol.get('compiled_while_running') or {}))[:5]}")
    for k, s in list(sites.items())[:6]:
        print(f"  call site {k}: {s}")
    for k, e in list(expl.items())[:4]:
        print(f"  variants of {k}: {e}")
EOF
echo "[$SECONDS s] done"
