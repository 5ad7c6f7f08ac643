"""The vendors' device-query tools, answered as the target's device while a file is loaded.

Packages find their GPU at import in more ways than torch.cuda: FlagGems runs every vendor's
query command (`nvidia-smi`, `rocm-smi`, ...) and keeps the vendor whose command succeeds;
Triton's `triton.testing.nvsmi(["clocks.max.sm"])` reads clocks from `nvidia-smi --query-gpu`;
perf models fall back on `pynvml`. On a machine without the target's device each of those fails
(no such command, no NVML library), and the package raises "No device were detected" or picks
no config.

While kinspect.compile.device.as_target answers for a target, `answer_command` stands in for the
target vendor's tools (a process that prints what the tool would print for the stand-in device,
from the same DeviceFacts) and makes the other vendors' tools missing, as they are on a machine
that has only the target's device; `Nvml` stands in for pynvml on a cuda target. A query kinspect
cannot answer from the facts (an `nvidia-smi --query-gpu` field it does not know) fails as the
tool fails on a bad field, never with an invented figure. Every answer is noted, and the load
says which tools were answered.
"""

from __future__ import annotations

import os
import sys
import types

# query tools by vendor: the target's are answered, the others are missing (FileNotFoundError)
TOOLS = {"nvidia-smi": "cuda", "rocm-smi": "hip", "amd-smi": "hip", "rocminfo": "hip"}
# `nvidia-smi --query-gpu=FIELD` fields answered from DeviceFacts (nvidia-smi --help-query-gpu names)
MiB = 1 << 20


def _fields(f, nounits: bool) -> dict:
    mib = "" if nounits else " MiB"
    mhz = "" if nounits else " MHz"
    return {"name": f.name, "gpu_name": f.name, "index": "0", "count": "1",
            "compute_cap": f"{f.major}.{f.minor}", "memory.total": f"{f.total_memory // MiB}{mib}",
            "memory.free": f"{(f.total_memory - (1 << 30)) // MiB}{mib}", "memory.used": f"0{mib}",
            "clocks.max.sm": f"{f.clock_rate // 1000}{mhz}", "clocks.max.graphics": f"{f.clock_rate // 1000}{mhz}",
            "clocks.sm": f"{f.clock_rate // 1000}{mhz}", "clocks.max.memory": f"{f.memory_clock_rate // 1000}{mhz}",
            "clocks.max.mem": f"{f.memory_clock_rate // 1000}{mhz}", "uuid": f"GPU-{f.uuid}",
            "pci.bus_id": f"00000000:{f.pci_bus_id:02X}:00.0"}


def nvidia_smi(argv: list[str], f) -> tuple[int, str]:
    """(exit code, output) of `nvidia-smi ARGS` on the stand-in device."""
    query = next((a.split("=", 1)[1] for a in argv if a.startswith("--query-gpu=")), None)
    if query is None and "--query-gpu" in argv and argv.index("--query-gpu") + 1 < len(argv):
        query = argv[argv.index("--query-gpu") + 1]
    fmt = next((a.split("=", 1)[1] for a in argv if a.startswith("--format=")), "")
    if query is not None:
        known = _fields(f, "nounits" in fmt)
        names = [q.strip() for q in query.split(",") if q.strip()]
        unknown = [q for q in names if q not in known]
        if unknown:      # as nvidia-smi answers a field it does not know; kinspect invents no figure
            return 2, f'Field "{unknown[0]}" is not a valid field to query.\n'
        row = ", ".join(known[q] for q in names)
        header = "" if "noheader" in fmt else ", ".join(names) + "\n"
        return 0, header + row + "\n"
    if "-L" in argv or "--list-gpus" in argv:
        return 0, f"GPU 0: {f.name} (UUID: GPU-{f.uuid})\n"
    return 0, (f"+ kinspect's stand-in for nvidia-smi: the target's device, no GPU here +\n"
               f"|   0  {f.name}  {f.total_memory // MiB}MiB  sm_{f.major}{f.minor} |\n")


def rocm_tool(tool: str, argv: list[str], f) -> tuple[int, str]:
    arch = f.gcnArchName.split(":")[0]
    if tool == "rocminfo":
        return 0, f"  Name:                    {arch}\n  Marketing Name:          {f.name}\n"
    return 0, f"GPU[0]\t\t: Card Series: \t\t{f.name}\nGPU[0]\t\t: GFX Version: \t\t{arch}\n"


def answer_command(args, target, f, noted: list):
    """What to run instead of `args` (a Popen argument list or string) while answering as `target`:
    a replacement argument list, FileNotFoundError for another vendor's tool, or None (run it)."""
    argv = [args] if isinstance(args, (str, bytes, os.PathLike)) else list(args)
    if not argv:
        return None
    first = os.fsdecode(argv[0])
    parts = first.split() if isinstance(args, str) else [first]   # shell=True strings: "nvidia-smi -L"
    tool = os.path.basename(parts[0]) if parts else ""
    if tool not in TOOLS:
        return None
    rest = [os.fsdecode(a) for a in parts[1:] + argv[1:]]
    if TOOLS[tool] != target.backend:
        noted.append((tool, False))
        raise FileNotFoundError(2, "No such file or directory", tool)
    code, out = nvidia_smi(rest, f) if tool == "nvidia-smi" else rocm_tool(tool, rest, f)
    noted.append((tool, True))
    program = f"import sys; sys.stdout.write({out!r}); sys.exit({code})" if code == 0 else \
        f"import sys; sys.stderr.write({out!r}); sys.exit({code})"
    return [sys.executable, "-I", "-S", "-c", program]


class NvmlError(Exception):
    """pynvml.NVMLError of the stand-in."""


def nvml_module(target, f, noted: list) -> types.ModuleType:
    """A stand-in `pynvml` answering as the target's device (an NVIDIA one; on another vendor's
    target, nvmlInit fails as it does where there is no NVIDIA driver)."""
    m = types.ModuleType("pynvml")
    m.__kinspect_stand_in__ = True
    m.NVMLError = NvmlError
    m.NVML_CLOCK_GRAPHICS, m.NVML_CLOCK_SM, m.NVML_CLOCK_MEM, m.NVML_CLOCK_VIDEO = 0, 1, 2, 3

    def init(*a, **k):
        noted.append(("pynvml", target.backend == "cuda"))
        if target.backend != "cuda":
            raise NvmlError("NVML Shared Library Not Found")

    class Memory:
        total, free, used = f.total_memory, f.total_memory - (1 << 30), 0

    clocks = {0: f.clock_rate // 1000, 1: f.clock_rate // 1000, 2: f.memory_clock_rate // 1000}
    m.nvmlInit = init
    m.nvmlShutdown = lambda: None
    m.nvmlDeviceGetCount = lambda: 1
    m.nvmlDeviceGetHandleByIndex = lambda i: 0
    m.nvmlDeviceGetName = lambda h: f.name
    m.nvmlDeviceGetCudaComputeCapability = lambda h: (f.major, f.minor)
    m.nvmlDeviceGetMemoryInfo = lambda h: Memory()
    m.nvmlDeviceGetUUID = lambda h: f"GPU-{f.uuid}"

    def clock(handle, kind):
        if kind not in clocks:
            raise NvmlError("Not Supported")
        return clocks[kind]

    m.nvmlDeviceGetMaxClockInfo = clock
    m.nvmlDeviceGetClockInfo = clock
    return m
