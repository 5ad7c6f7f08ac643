"""The kernel the spine-triton stand-in runs: the row softmax of the RISC-V fixture
(tests/fixtures/cpu/triton-shared-riscv-softmax), with example arguments for `kinspect bench`.

Written as spine-triton programs are: the module activates the backend's driver by hand (spine-triton
3.6's driver is never active on its own; its examples call
`triton.runtime.driver.set_active(CPUDriver())`). Reaching the driver through Triton's backend registry
works the same for spine-triton and for its test stand-in."""

import torch
import triton
import triton.language as tl
from triton.backends import backends

triton.runtime.driver.set_active(backends["spine_triton"].driver())


@triton.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row_idx = tl.program_id(0)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    row = tl.load(input_ptr + row_idx * input_row_stride + col_offsets, mask=col_offsets < n_cols,
                  other=-float("inf"))
    row_minus_max = row - tl.max(row, axis=0)
    numerator = tl.exp(row_minus_max)
    tl.store(output_ptr + row_idx * output_row_stride + col_offsets, numerator / tl.sum(numerator, axis=0),
             mask=col_offsets < n_cols)


kinspect_examples = {"softmax_kernel": {
    "args": {"output_ptr": "*fp32:64x1000", "input_ptr": "*fp32:64x1000", "input_row_stride": "i32:1000",
             "output_row_stride": "i32:1000", "n_cols": "i32:1000"},
    "constexprs": {"BLOCK_SIZE": 1024}, "grid": (64,),
    "bytes": lambda a: 2 * a["input_ptr"].numel() * 4,
    "reference": lambda x: torch.softmax(x, dim=-1), "inputs": ["input_ptr"], "output": "output_ptr",
}}

if __name__ == "__main__":
    x = torch.randn(64, 1000)
    y = torch.empty_like(x)
    for _ in range(3):
        softmax_kernel[(64,)](y, x, 1000, 1000, 1000, BLOCK_SIZE=1024)
    torch.testing.assert_close(y, torch.softmax(x, dim=-1))
    print("softmax on the spine test backend: ok")
