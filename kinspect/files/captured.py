"""What a capture recorded: the record `kinspect capture` (kinspect.program.run) returns, which its
summary (kinspect.render.terminal.capture_summary) and its JSON (kinspect.render.json) read."""

from __future__ import annotations

from dataclasses import dataclass, field

from kinspect.core.model import AutotuneDecision, Variant


@dataclass(frozen=True)
class CaptureTiming:
    """How the capture timed launches on the GPU, summed over the program's processes."""

    method: str                             # profiler or events
    ms: float = 0.0                         # what timing cost on the CPU side
    failed: str = ""                        # why the timer could not start
    coverage: str = ""                      # which launches were timed (--time-sample)
    other_kernels: dict[str, dict] = field(default_factory=dict)    # GPU work no launch hook saw: name -> calls, ms
    tuning_other_kernels: dict[str, dict] = field(default_factory=dict)  # those launched inside autotuners'
                                                                         # benchmarks (their L2 flushes)
    window: str = ""                        # when the profiler read them


@dataclass(frozen=True)
class CaptureResult:
    code: int
    variants: list[Variant]                 # recorded or launched in this run, finished
    launches: int = 0                       # launches recorded, all processes
    hook_ms: float = 0.0                    # time observing launches took, all processes (an estimate: see per_launch_us)
    timing: CaptureTiming | None = None     # when timed
    unattributed: dict[str, int] = field(default_factory=dict)     # kernel -> launches not recorded in the store
    notes: tuple[str, ...] = ()
    derive_s: float = 0.0
    autotune: tuple[AutotuneDecision, ...] = ()     # the configs triton.autotune chose in this run
    interpret: str | None = None            # the target launches under the interpreter were compiled for
    compile_s: float = 0.0                  # compiling them, after the program
    interrupted: bool = False               # Ctrl-C stopped the steps after the program: see notes
    observed: dict[str, int] = field(default_factory=dict)    # how launches were observed -> variants (hooks.observe)
    per_launch_us: float = 0.0              # what observing costs a launch, measured in the program's processes
    static_launcher: str = ""               # Inductor's static launcher as the program had it (left so)
