"""A torch.compile'd GPT-2 training step (forward, backward, AdamW) from `transformers`: the program
of the speed-of-light, capture-cost and tune figures (docs/program-view.md).

    kinspect capture --store gpt2 --time -- python samples/gpt2_train.py --iters 5
    python samples/gpt2_train.py --iters 40 --step-times steps.json   # a median step time, no kinspect
    python samples/gpt2_train.py --iters 5 --profile prof.json         # the torch profiler's view

The model is built from a `GPT2Config` with random weights (nothing is downloaded): 4 layers, bf16,
batch 8 x 512 tokens by default. On a machine without a GPU or without `transformers` it says so in
one line and exits 0: Inductor makes C++ on a CPU, not Triton kernels.
"""

import argparse
import json
import statistics
import time

import torch


def build(layers: int, seq: int):
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(n_layer=layers, n_positions=max(seq, 1024))
    model = GPT2LMHeadModel(config).to(device="cuda", dtype=torch.bfloat16)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    return model, torch.compile(model), opt


def step(compiled, opt, ids):
    loss = compiled(input_ids=ids, labels=ids).loss
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    return loss


def step_ms(compiled, opt, ids, iters: int) -> list[float]:
    """Each of `iters` training steps' time in ms, from CUDA events around it (read after the last)."""
    times = []
    for _ in range(iters):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        step(compiled, opt, ids)
        end.record()
        times.append((start, end))
    torch.cuda.synchronize()
    return [s.elapsed_time(e) for s, e in times]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iters", type=int, default=3, help="training steps after the one that compiles")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=512)
    ap.add_argument("--step-times", default=None, metavar="JSON",
                    help="time each step after the first with CUDA events and write them (ms) here")
    ap.add_argument("--profile", default=None, metavar="JSON",
                    help="run under torch.profiler and write each GPU kernel's calls and total ms here")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print("no GPU: torch.compile generates C++ here, not Triton kernels")
        return
    try:
        import transformers  # noqa: F401
    except ImportError:
        print("no transformers: pip install transformers (the model is built from a config, nothing downloaded)")
        return
    torch.manual_seed(0)
    _, compiled, opt = build(a.layers, a.seq)
    ids = torch.randint(0, 50257, (a.batch, a.seq), device="cuda")

    def run():
        first = step(compiled, opt, ids)             # compiles
        assert torch.isfinite(first).item(), "the first step's loss is not finite"
        return step_ms(compiled, opt, ids, a.iters)

    t0 = time.perf_counter()
    if not a.profile:
        ms = run()
    else:   # the whole run, compile included: the launches a capture of the same run records
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            ms = run()
        totals = {}
        for e in prof.profiler.kineto_results.events():
            if str(e.device_type()).endswith("CUDA"):
                t = totals.setdefault(e.name(), {"calls": 0, "total_ms": 0.0})
                t["calls"] += 1
                t["total_ms"] += e.duration_ns() / 1e6
        with open(a.profile, "w") as f:
            json.dump(totals, f, indent=1)
    if a.step_times:
        with open(a.step_times, "w") as f:
            json.dump({"step_ms": ms, "wall_s": time.perf_counter() - t0}, f)
    med = f"; median step {statistics.median(ms):.2f} ms" if ms else ""
    print(f"GPT-2 ({a.layers} layers, bf16, batch {a.batch}x{a.seq}): {a.iters} training steps after the first{med}")


if __name__ == "__main__":
    main()
