"""The shipped wrappers launch their compiled kernels directly (kinspect.backends.direct_launch), and what
they launch is what the JIT launches: the same compiled kernel, grid and arguments.

On this CPU-only machine the launches go through tests/dryrun.py's driver: Triton compiles for sm90
for real and the JIT's whole launch path runs; only the kernel does not. A launch hook makes the
wrappers take the JIT's path (so tools that hook launches see every one), which gives the JIT's
launches to compare with.
"""

import threading

import pytest
import torch
from triton import knobs

from kinspect.backends import direct_launch
from kinspect.compile import private_cache
from kinspect.compile.driver import fresh_binders
from kinspect.kernels import elementwise, fused_mm_softmax_tiled, matmul, softmax
from tests.dryrun import dry_run

FM = fused_mm_softmax_tiled


@pytest.fixture(scope="module")
def dry():
    """One dry-run driver and private Triton cache for the module: each kernel compiles once."""
    kernels = [softmax.softmax_kernel, FM.fused_mm_softmax_tiled_kernel, FM.softmax_rescale_kernel,
               matmul.matmul_kernel, elementwise.add_kernel, elementwise.gelu_kernel, elementwise.square_kernel]
    with private_cache(), dry_run() as d:
        import contextlib

        with contextlib.ExitStack() as stack:
            for k in kernels:
                stack.enter_context(fresh_binders(k))
            for plans in (softmax._PLANS, FM._CALLS, matmul._CHOSEN):
                plans.clear()
            yield d
            for plans in (softmax._PLANS, FM._CALLS, matmul._CHOSEN):
                plans.clear()


class JitRuns:
    """Counts JITFunction.run calls of some kernels (warmup goes through run too)."""

    def __init__(self, *fns):
        self.fns, self.count = fns, 0

    def __enter__(self):
        for fn in self.fns:
            original = fn.run

            def counted(*a, _original=original, **k):
                self.count += 1
                return _original(*a, **k)
            fn.run = counted
        return self

    def __exit__(self, *exc):
        for fn in self.fns:
            del fn.run


class Listening:
    """A launch hook for the block: the wrappers must take the JIT's path, and the hook sees it."""

    def __enter__(self):
        self.seen = []
        self.hook = lambda md: self.seen.append(md.get()["name"] if md is not None else None)
        knobs.runtime.launch_enter_hook.add(self.hook)
        return self

    def __exit__(self, *exc):
        knobs.runtime.launch_enter_hook.remove(self.hook)


def _labels(launches, tensors: dict) -> list:
    """Launches with each address replaced by the name of the tensor it belongs to ('scratch' for
    any other: pass 1's statistics are reused by the direct path and fresh in the JIT's)."""
    names = {t.data_ptr(): n for n, t in tensors.items()}

    def label(x):
        if torch.is_tensor(x):
            x = x.data_ptr()
        if isinstance(x, int) and x > 1 << 32:
            return names.get(x, "scratch")
        return x
    return [(l.name, l.grid, tuple(label(x) for x in l.args)) for l in launches]


def _wrapped(name, shape, dim=-1):
    torch.manual_seed(0)
    if name == "softmax":
        x = torch.randn(*shape)
        return (softmax.softmax_kernel,), (lambda: softmax.softmax(x)), {"x": x}
    if name == "fused":
        m, n, k = shape
        a, b = torch.randn(m, k), torch.randn(k, n)
        return (FM.fused_mm_softmax_tiled_kernel, FM.softmax_rescale_kernel), \
            (lambda: FM.fused_mm_softmax_tiled(a, b, dim)), {"a": a, "b": b}
    if name == "matmul":
        m, n, k = shape
        a, b = torch.randn(m, k, dtype=torch.float16), torch.randn(k, n, dtype=torch.float16)
        return (matmul.matmul_kernel,), (lambda: matmul.matmul(a, b)), {"a": a, "b": b}
    x, y = torch.randn(*shape), torch.randn(*shape)
    fns = {"add": (elementwise.add_kernel, lambda: elementwise.add(x, y)),
           "gelu": (elementwise.gelu_kernel, lambda: elementwise.gelu(x)),
           "square": (elementwise.square_kernel, lambda: elementwise.square(x))}
    fn, call = fns[name]
    return (fn,), call, {"x": x, "y": y}


CASES = [("softmax", (1024, 2), -1), ("softmax", (37, 100), -1), ("softmax", (3, 40000), -1),
         ("fused", (64, 64, 64), -1), ("fused", (100, 600, 33), -1), ("fused", (100, 600, 33), 0),
         ("fused", (600, 300, 40), 0), ("matmul", (100, 72, 40), -1), ("add", (1000,), -1),
         ("gelu", (1001,), -1), ("square", (37, 100), -1)]


@pytest.mark.parametrize("name,shape,dim", CASES, ids=[f"{c[0]}-{'x'.join(map(str, c[1]))}-dim{c[2]}" for c in CASES])
def test_a_wrapper_launches_what_the_jit_launches(dry, name, shape, dim):
    fns, call, tensors = _wrapped(name, shape, dim)
    call()                                        # prepares the problem: compiles, through the JIT
    compiled = sum(len(fn.device_caches[0][0]) for fn in fns)
    start = len(dry.launched)
    with JitRuns(*fns) as runs:
        out = call()
        out2 = call()
    assert runs.count == 0, "a prepared problem must not enter the JIT"
    direct = dry.launched[start:]
    per = len(direct) // 2                        # launches a call: 2 on fused's two-pass path, else 1
    assert per >= 1 and len(direct) == 2 * per
    assert all(isinstance(x, int) for l in direct for x in l.args[:2]), "pointers go to the launcher as ints"
    with Listening() as hooks, JitRuns(*fns) as runs:
        out3 = call()
    jit = dry.launched[start + len(direct):]
    assert runs.count == per and hooks.seen == [l.name for l in jit], "with a hook, the JIT launches"
    assert sum(len(fn.device_caches[0][0]) for fn in fns) == compiled, "and finds the very same kernels"
    for launches, o in ((direct[:per], out), (direct[per:], out2)):
        assert _labels(launches, {**tensors, "out": o}) == _labels(jit, {**tensors, "out": out3})


def test_the_statistics_buffer_is_reused_per_stream_and_thread(dry):
    a, b = torch.randn(100, 33), torch.randn(33, 600)
    run = lambda: FM.fused_mm_softmax_tiled(a, b)  # noqa: E731
    run()
    start = len(dry.launched)
    run()
    run()
    other = threading.Thread(target=run)
    other.start()
    other.join()
    firsts = [l.args[3:5] for l in dry.launched[start:] if l.name == "fused_mm_softmax_tiled_kernel"]
    assert len(firsts) == 3 and firsts[0] == firsts[1] != firsts[2]
    assert all(p % 16 == 0 for pair in firsts for p in pair), "both halves 16-byte aligned, as compiled"
    assert "two passes" in FM.describe_call(a, b) and "launched directly" in FM.describe_call(a, b)


def test_an_unaligned_tensor_goes_through_the_jit(dry):
    base = torch.randn(1024 * 2 + 1)
    x = base[1:].view(1024, 2)                    # 4 bytes past an aligned address
    softmax.softmax(x)
    with JitRuns(softmax.softmax_kernel) as runs:
        y = softmax.softmax(x)
    assert runs.count == 1
    assert dry.launched[-1].args[0] is x and dry.launched[-1].args[1] is y


def test_another_current_device_goes_through_the_jit(dry, monkeypatch):
    x = torch.randn(64, 64)
    softmax.softmax(x)
    monkeypatch.setattr(dry, "get_current_device", lambda: 1)   # not the device the kernel was loaded on
    with JitRuns(softmax.softmax_kernel) as runs:
        softmax.softmax(x)
    assert runs.count == 1


def test_kernel_launcher_prepares_on_the_first_aligned_call(dry):
    fn = elementwise.add_kernel
    base = torch.randn(1001)
    x, y, out = base[1:], torch.randn(1000), torch.empty(1000)
    go = direct_launch.KernelLauncher(fn)
    key = ("test", x.dtype)
    with JitRuns(fn) as runs:
        go(key, (1,), (x, y, out), (1000, 1024))
        assert runs.count == 1 and len(go.plans) == 0      # unaligned: the JIT, nothing kept
        x = torch.randn(1000)
        go(key, (1,), (x, y, out), (1000, 1024))
        go(key, (1,), (x, y, out), (1000, 1024))
    assert runs.count == 2 and len(go.plans) == 1           # warmup once, then direct
    assert dry.launched[-1].args[:3] == (x.data_ptr(), y.data_ptr(), out.data_ptr())


def test_plans_keep_the_most_recent():
    plans = direct_launch.Plans(size=2)
    for k in "abc":
        plans.put(k, k.upper())
    assert len(plans) == 2 and plans.get("a") is None and plans.get("c") == "C"


def test_the_interpreter_and_a_missing_driver_are_not_direct():
    class Interpreted:  # what TRITON_INTERPRET makes of a kernel: no per-device caches
        pass

    assert not direct_launch.usable(Interpreted())
    assert direct_launch.aligned(0, 16, 4096) and not direct_launch.aligned(16, 4)


def test_direct_launches_can_be_switched_off(dry, monkeypatch):
    x = torch.randn(64, 64)
    softmax.softmax(x)
    monkeypatch.setattr(direct_launch, "DIRECT", False)   # what KINSPECT_DIRECT_LAUNCH=0 sets at import
    with JitRuns(softmax.softmax_kernel) as runs:
        softmax.softmax(x)
    assert runs.count == 1
