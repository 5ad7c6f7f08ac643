"""What a sweep compiles (Job) and what comes back (JobResult): plain values a worker process
receives and answers, shared by kinspect.diff.sweep and kinspect.diff.replayed."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Job:
    """One variant to compile, in plain values a worker process can receive."""

    kernel: str                              # shipped name or absolute path/file.py:name
    target: str | None
    constexprs: tuple[tuple[str, object], ...] = ()
    num_warps: int | None = None
    num_stages: int | None = None
    args: tuple[str, ...] = ()               # --arg NAME=TYPE strings, parsed in the worker
    size: str | None = None
    out_dir: str = ""
    config: int | None = None                # an autotuned kernel's config, by its number
    replay: str = ""                         # a captured variant's folder or a replay spec file (kinspect.replay)

    def describe(self) -> str:
        parts = [self.kernel] + [f"config={self.config}"] * (self.config is not None)
        parts += [f"{k}={v}" for k, v in self.constexprs]
        parts += [f"{k}={v}" for k, v in (("target", self.target), ("num_warps", self.num_warps),
                                          ("num_stages", self.num_stages)) if v is not None]
        return " ".join(parts)


@dataclass(frozen=True)
class JobResult:
    job: Job
    path: str | None = None      # the stored variant folder
    error: str | None = None
    metrics: dict | None = None  # its record of figures (VariantMetrics.to_json), made by the worker
    reused: bool = False         # taken from the store as it was (same request), not compiled again
