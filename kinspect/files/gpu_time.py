"""The GPU work of a captured program that no Triton launch hook saw (cuBLAS and cuDNN kernels, flash
attention, copies), as the capture's profiler recorded it: `<store>/other_kernels.json`, so the program
view can say what share of the GPU time its Triton kernels are and name the largest of the rest."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from kinspect.files import jsonfile

FILE = "other_kernels.json"
GPU_TIME_VERSION = 1


@dataclass(frozen=True)
class Others:
    method: str
    kernels: dict               # name -> {"calls": int, "ms": float}, largest first
    window: str = ""            # when the profiler read them ("from the first observed Triton launch to the end")

    @property
    def ms(self) -> float:
        return sum(k["ms"] for k in self.kernels.values())

    @classmethod
    def from_json(cls, d: dict) -> "Others":
        if not isinstance(d, dict) or d.get("version") != GPU_TIME_VERSION or not isinstance(d.get("kernels"), dict):
            raise ValueError("not an other_kernels record")
        kernels = {str(n): {"calls": int(k["calls"]), "ms": float(k["ms"])} for n, k in d["kernels"].items()}
        return cls(str(d.get("method", "")), dict(sorted(kernels.items(), key=lambda kv: -kv[1]["ms"])),
                   str(d.get("window") or ""))


def write_others(root: str | os.PathLike, kernels: dict, method: str, window: str = "") -> Path:
    return jsonfile.write(Path(root) / FILE, {"version": GPU_TIME_VERSION, "method": method, "kernels": kernels,
                                              "window": window})


def read_others(root: str | os.PathLike) -> Others | None:
    return jsonfile.read(Path(root) / FILE, Others.from_json)
