"""Device facts read at import, as libraries do to pick kernels and configs."""

import torch

DEVICE_NAME = torch.cuda.get_device_name(0)
MAJOR, MINOR = torch.cuda.get_device_capability()
IS_HOPPER = MAJOR == 9
IS_AMD = torch.version.hip is not None
NUM_SMS = torch.cuda.get_device_properties("cuda").multi_processor_count


def autotune_configs():
    import triton

    warps = (4, 8) if IS_HOPPER else (2, 4)
    return [triton.Config({"BLOCK_N": b}, num_warps=w) for b in (256, 512) for w in warps]
