"""The GPU work of a captured program that no Triton launch hook saw (cuBLAS and cuDNN kernels, flash
attention, copies, NCCL's communication), as the capture's profiler recorded it: `<store>/other_kernels.json`,
so the program view can say what share of the GPU time its Triton kernels are and name the largest of the
rest. What ran while an autotuner benchmarked (the L2 flushes between its trials) is kept apart as
`tuning`: it is tuning, not the program's work."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from kinspect.files import jsonfile

FILE = "other_kernels.json"
GPU_TIME_VERSION = 1


@dataclass(frozen=True)
class Others:
    method: str
    kernels: dict               # name -> {"calls": int, "ms": float}, largest first
    window: str = ""            # when the profiler read them ("from the first observed Triton launch to the end")
    tuning: dict = field(default_factory=dict)   # name -> {"calls", "ms"} of what ran inside autotuners' benchmarks
                                                 # (a store from before kinspect kept them apart has none)

    @property
    def ms(self) -> float:
        return sum(k["ms"] for k in self.kernels.values())

    @property
    def communication(self) -> dict:
        """The collective-communication kernels among them (NCCL's, RCCL's): their own line in a header."""
        return {n: k for n, k in self.kernels.items() if COMMUNICATION_RE.search(n)}

    @property
    def tuning_ms(self) -> float:
        return sum(k["ms"] for k in self.tuning.values())

    @classmethod
    def from_json(cls, d: dict) -> "Others":
        if not isinstance(d, dict) or d.get("version") != GPU_TIME_VERSION or not isinstance(d.get("kernels"), dict):
            raise ValueError("not an other_kernels record")
        def named(found) -> dict:
            if not isinstance(found, dict):
                raise ValueError("not an other_kernels record")
            kernels = {str(n): {"calls": int(k["calls"]), "ms": float(k["ms"])} for n, k in found.items()}
            return dict(sorted(kernels.items(), key=lambda kv: -kv[1]["ms"]))

        return cls(str(d.get("method", "")), named(d["kernels"]), str(d.get("window") or ""),
                   named(d.get("tuning") or {}))


# ncclDevKernel_AllReduce_Sum_f32_RING_LL, ncclKernel_AllGather_..., rcclKernel...: collective communication
COMMUNICATION_RE = re.compile(r"\b[nr]cclDevKernel|\b[nr]cclKernel|\bnccl\w*(AllReduce|AllGather|ReduceScatter|Broadcast|"
                              r"SendRecv|AllToAll)", re.I)


def write_others(root: str | os.PathLike, kernels: dict, method: str, window: str = "", tuning: dict | None = None) -> Path:
    return jsonfile.write(Path(root) / FILE, {"version": GPU_TIME_VERSION, "method": method, "kernels": kernels,
                                              "window": window, "tuning": dict(tuning or {})})


def read_others(root: str | os.PathLike) -> Others | None:
    return jsonfile.read(Path(root) / FILE, Others.from_json)
