"""A Llama-style decoder training step (random weights from a config, bf16, forward + backward + AdamW),
the program the issue-40 GPU run captures three ways: torch.compile'd (--compile), with a kernel library's
hand-written Triton kernels patched in (--liger: Liger-Kernel's RMSNorm, RoPE, SwiGLU, fused linear
cross-entropy; no torch.compile), and under torchrun with DistributedDataParallel (RANK set: one GPU per
rank where there are enough, else all ranks share GPU 0).

    python benchmarks/programs/llama_step.py --compile --steps 5
    torchrun --nproc_per_node 2 benchmarks/programs/llama_step.py --compile --steps 5

Needs `transformers` (and `liger_kernel` for --liger). Prints one line per rank: step time and loss.
"""

from __future__ import annotations

import argparse
import os
import time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--liger", action="store_true")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--hidden", type=int, default=1024)
    ap.add_argument("--seq", type=int, default=512)
    ap.add_argument("--batch", type=int, default=4)
    a = ap.parse_args()

    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    device = torch.device("cuda", rank % max(1, torch.cuda.device_count()))
    torch.cuda.set_device(device)
    if world > 1:
        import torch.distributed as dist

        dist.init_process_group("nccl")
    if a.liger:
        from liger_kernel.transformers import apply_liger_kernel_to_llama

        apply_liger_kernel_to_llama(rope=True, rms_norm=True, swiglu=True, cross_entropy=False,
                                    fused_linear_cross_entropy=True)
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=32000, hidden_size=a.hidden, intermediate_size=a.hidden * 11 // 4,
                         num_hidden_layers=a.layers, num_attention_heads=a.hidden // 64,
                         num_key_value_heads=a.hidden // 128, max_position_embeddings=a.seq)
    model = LlamaForCausalLM(config).to(device=device, dtype=torch.bfloat16)
    if world > 1:
        from torch.nn.parallel import DistributedDataParallel

        model = DistributedDataParallel(model, device_ids=[device.index])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    step = torch.compile(model) if a.compile else model
    ids = torch.randint(0, config.vocab_size, (a.batch, a.seq), device=device)
    times = []
    for _ in range(a.steps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        loss = step(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    print(f"rank {rank}/{world}: step {1e3 * sorted(times)[len(times) // 2]:.1f} ms (median of {len(times)}), "
          f"loss {loss.item():.3f}", flush=True)
    if world > 1:
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
