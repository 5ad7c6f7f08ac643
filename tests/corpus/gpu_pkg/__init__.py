"""A kernel package that refuses to load without a GPU, as some libraries' __init__ does."""

import torch

if not torch.cuda.is_available():
    raise RuntimeError("No device were detected: this package needs a CUDA or ROCm GPU")

from .kernels import persistent_rmsnorm_kernel  # noqa: E402,F401
