"""torch.compile generates Triton kernels on a GPU; `kinspect capture` records them too.

    kinspect capture -o out -- python samples/torch_compile_capture.py

On a machine without a GPU, inductor generates C++ instead of Triton, so nothing is recorded.
"""

import torch


def gelu_mlp(x, w):
    return torch.nn.functional.gelu(x @ w, approximate="tanh").softmax(dim=-1)


def main():
    if not torch.cuda.is_available():
        print("no GPU: torch.compile generates C++ here, not Triton kernels")
        return
    x = torch.randn(512, 1024, device="cuda")
    w = torch.randn(1024, 1024, device="cuda")
    compiled = torch.compile(gelu_mlp)
    torch.testing.assert_close(compiled(x, w), gelu_mlp(x, w), rtol=1e-3, atol=1e-4)
    print("torch.compile output matches eager")


if __name__ == "__main__":
    main()
