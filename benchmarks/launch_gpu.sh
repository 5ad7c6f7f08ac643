#!/usr/bin/env bash
# Issue 29 on one GPU (H200), at most about 8 minutes: what capturing costs and whether it leaves the
# program as it is. Run from the repository root; everything goes to $OUT (default /tmp/launch-out).
#   1. versions, Inductor's static-launcher setting, the kineto calls kinspect's timer uses
#   2. the GPU suite (`python -m pytest -m gpu tests/gpu -q`) and its wall time; -rP keeps the
#      passing tests' prints: launch counts and GPU ms against the torch profiler's, the static
#      launcher with and without capture (tests/gpu/test_capture_live.py)
#   3. benchmarks/gpt2_step.py: GPT-2 training step plain / capture / capture --time / tritonparse,
#      alternating rounds (its caches warmed in the background while the suite runs)
#   4. benchmarks/capture_overhead.py --gpu: tiny kernel µs per launch, then compile-and-run 8 variants
# tritonparse comes from a wheel in .gpu/wheels/ when there is one (the host has no registry).
#
#     OUT=/tmp/launch-out bash benchmarks/launch_gpu.sh
set -uo pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/launch-out}
BUDGET=${BUDGET:-470}
mkdir -p "$OUT"
SECONDS=0
left() { echo $((BUDGET - SECONDS)); }
cap() { local t=$1 l; l=$(left); [ "$t" -gt "$l" ] && t=$l; [ "$t" -lt 1 ] && t=1; echo "$t"; }

WHEEL=$(ls .gpu/wheels/tritonparse-*.whl 2>/dev/null | tail -1)
if [ -n "$WHEEL" ] && ! python3 -c "import tritonparse" 2>/dev/null; then
    python3 -m pip install -q --no-deps --no-index --target /tmp/tp-site "$WHEEL" > "$OUT/tritonparse_install.txt" 2>&1
fi
export PYTHONPATH=$PWD:/tmp/tp-site:${PYTHONPATH:-}

echo "[$SECONDS s] environment" | tee "$OUT/env.txt"
python3 - >> "$OUT/env.txt" 2>&1 <<'PY'
import inspect, os, torch, triton
from torch._inductor import config
print("torch", torch.__version__, "triton", triton.__version__, torch.cuda.get_device_name())
print("use_static_cuda_launcher", config.use_static_cuda_launcher, "env", os.environ.get("TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER"))
print("launch_enter_hook", type(triton.knobs.runtime.launch_enter_hook).__name__)
print("_prepare_profiler", torch._C._autograd._prepare_profiler.__doc__.splitlines()[0][:200])
from torch._inductor.runtime.triton_heuristics import CachingAutotuner
print("CachingAutotuner.run", inspect.signature(CachingAutotuner.run))
try:
    import tritonparse; print("tritonparse", getattr(tritonparse, "__version__", "?"), tritonparse.__file__)
except ImportError as e:
    print("tritonparse: not installed", e)
PY
cat "$OUT/env.txt"

echo "[$SECONDS s] GPT-2 caches warming in the background (not timed)"
( python3 benchmarks/gpt2_step.py --caches /tmp/gpt2-caches --warm-only --iters 3 > "$OUT/gpt2_warm.txt" 2>&1 ) &
WARM=$!

echo "[$SECONDS s] GPU suite"
T0=$SECONDS
timeout "$(cap 300)" python3 -m pytest -m gpu tests/gpu -q -rP --durations=25 -p no:cacheprovider > "$OUT/pytest.txt" 2>&1
echo "exit $? after $((SECONDS - T0)) s (the suite's wall time, the GPT-2 warm-up beside it)" | tee -a "$OUT/pytest.txt"
grep -E "passed|failed|error|calls .* vs profiler|static|^\{'plain'" "$OUT/pytest.txt" | tail -15
wait $WARM; cat "$OUT/gpt2_warm.txt"

echo "[$SECONDS s] GPT-2 step benchmark"
timeout "$(cap 170)" python3 benchmarks/gpt2_step.py --caches /tmp/gpt2-caches --rounds 2 --iters 20 \
    --modes plain,capture,capture-time,tritonparse > "$OUT/gpt2_step.txt" 2>&1
echo "exit $?" >> "$OUT/gpt2_step.txt"; cat "$OUT/gpt2_step.txt"

echo "[$SECONDS s] tiny kernel, µs per launch"
timeout "$(cap 100)" python3 benchmarks/capture_overhead.py --gpu --only launch --rounds 2 --launches 20000 \
    > "$OUT/overhead_launch.txt" 2>&1
echo "exit $?" >> "$OUT/overhead_launch.txt"; cat "$OUT/overhead_launch.txt"

echo "[$SECONDS s] compile and run 8 variants"
timeout "$(cap 90)" python3 benchmarks/capture_overhead.py --gpu --only compile --rounds 2 > "$OUT/overhead_compile.txt" 2>&1
echo "exit $?" >> "$OUT/overhead_compile.txt"; cat "$OUT/overhead_compile.txt"
echo "[$SECONDS s] done"
