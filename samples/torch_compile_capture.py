"""A torch.compile'd TransformerEncoderLayer, forward and backward: torch.compile generates Triton
kernels on a GPU, and `kinspect capture` records them, with how often each ran and its GPU time.

    kinspect capture --store out --time -- python samples/torch_compile_capture.py --iters 50
    python samples/torch_compile_capture.py --iters 50 --profile prof.json   # the torch profiler's view

With --profile (and no kinspect), the whole run is under torch.profiler and the total GPU time of each
Triton kernel (by name) is written as JSON: what `tests/gpu/test_capture_live.py` compares kinspect's
per-kernel GPU time with. On a machine without a GPU, inductor generates C++ instead of Triton, so
nothing is recorded.
"""

import argparse
import json

import torch


class Encoder(torch.nn.Module):
    """The model as projects write one: their own module around torch.nn's. Dynamo keeps no frame from
    inside torch/nn/modules in the stack traces Inductor keeps, so a torch.nn layer compiled directly
    names no line of the model; through this forward each kernel names the line below."""

    def __init__(self, d_model: int):
        super().__init__()
        self.layer = torch.nn.TransformerEncoderLayer(d_model=d_model, nhead=8, dim_feedforward=4 * d_model,
                                                      dropout=0.0, batch_first=True, device="cuda")

    def forward(self, x):
        return self.layer(x)


def model(d_model: int):
    eager = Encoder(d_model)
    return eager, torch.compile(eager)


def step(compiled, x):
    out = compiled(x)
    out.sum().backward()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iters", type=int, default=3, help="forward+backward steps after the one that compiles")
    ap.add_argument("--d-model", type=int, default=256)
    ap.add_argument("--profile", default=None, metavar="JSON",
                    help="run under torch.profiler and write each Triton kernel's total GPU time here")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print("no GPU: torch.compile generates C++ here, not Triton kernels")
        return
    torch.manual_seed(0)
    eager, compiled = model(a.d_model)
    x = torch.randn(32, 128, a.d_model, device="cuda", requires_grad=True)

    def run():
        torch.testing.assert_close(step(compiled, x), eager(x), rtol=2e-2, atol=2e-2)   # compiles
        for _ in range(a.iters):
            step(compiled, x)
        torch.cuda.synchronize()

    if not a.profile:
        run()
    else:   # the whole run, compile included: the launches a capture of the same run records
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            run()
        totals = {}
        for e in prof.profiler.kineto_results.events():
            if str(e.device_type()).endswith("CUDA") and e.name().startswith("triton_"):
                t = totals.setdefault(e.name(), {"calls": 0, "total_ms": 0.0})
                t["calls"] += 1
                t["total_ms"] += e.duration_ns() / 1e6
        with open(a.profile, "w") as f:
            json.dump(totals, f, indent=1)
    print(f"torch.compile output matches eager; {a.iters} forward+backward steps")


if __name__ == "__main__":
    main()
