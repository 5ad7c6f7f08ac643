"""Frozen records shared across kinspect: targets, stages, compile times and variants.

A Variant is what kinspect stores per compiled kernel: its target, specialization, stage files
and JIT times. It round-trips through `record.json` (see store.py) and never holds Triton objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field, asdict
from typing import Any

RECORD_VERSION = 2
# Versions this kinspect reads: 1 had no launch records and no Triton start-up time.
READABLE_VERSIONS = (1, 2)


@dataclass(frozen=True)
class Target:
    """A compile target: `cuda:90`, `hip:gfx942`, `cpu:x86_64`, `spine_triton:riscv64`."""

    backend: str
    arch: str
    warp_size: int = 0

    def __str__(self) -> str:
        return f"{self.backend}:{self.arch}"

    @property
    def slug(self) -> str:
        """A folder-safe form: `cuda-90`."""
        return f"{self.backend}-{self.arch}".replace(":", "-").replace("/", "-")


@dataclass(frozen=True)
class StageKind:
    """What a backend says about one of its stages.

    `ext` is the file extension Triton uses in its cache (`ptx`, `cubin`); `dialect` names the
    parser that reads it (`mlir`, `llvm`, `ptx`, `sass`, `amdgcn`, `riscv`, ...); `binary` stages
    are kept but not shown as text; `derived_from` names the stage a derived stage is made from.
    """

    name: str
    ext: str
    dialect: str
    binary: bool = False
    order: int = 100
    derived_from: str | None = None
    title: str = ""


@dataclass(frozen=True)
class StageFile:
    """One stage of one variant, as stored: its name, file (relative to the variant folder),
    size and line count (None for binary stages)."""

    name: str
    file: str
    bytes: int
    lines: int | None
    dialect: str
    binary: bool = False
    derived_by: str | None = None
    section: str | None = None  # part of a combined file (triton-cpu test dumps: "LLVM IR", "ASM")


@dataclass(frozen=True)
class CompileTimes:
    """Triton's CompileTimes in microseconds: IR initialisation, each lowering stage, storing.

    `startup_us` is Triton's one-time start-up (hashing its own sources for the cache key) that the
    first compile in a process pays inside its IR initialisation; it is split out of
    `ir_initialization_us` and not part of `total_us`, which is the kernel's own JIT time."""

    ir_initialization_us: int
    stages: tuple[tuple[str, int], ...]
    store_results_us: int
    startup_us: int = 0

    @property
    def total_us(self) -> int:
        return self.ir_initialization_us + sum(us for _, us in self.stages) + self.store_results_us


# an argument's kind in a launch record, by the Python type of a scalar's value
SCALAR_KINDS = {int: "int", float: "float", bool: "bool", str: "str", type(None): "none"}


@dataclass(frozen=True)
class ArgSpec:
    """One argument of a launch: a tensor's shape, strides, dtype and device, or a scalar's value
    (constexprs included, as the launch passed them)."""

    name: str
    kind: str                       # tensor | int | float | bool | none | str | tensordesc | dtype | other
    value: Any = None               # a scalar's value; a short repr for "other"
    shape: tuple[int, ...] = ()
    strides: tuple[int, ...] = ()
    dtype: str = ""
    device: str = ""

    def describe(self) -> str:
        if self.kind == "tensor":
            return f"{self.dtype}[{'x'.join(map(str, self.shape))}]"
        if self.kind == "tensordesc":
            return f"desc {self.dtype}[{'x'.join(map(str, self.shape))}]"
        return repr(self.value)


def grid3(grid) -> tuple[int, ...]:
    """A launch grid as three ints, the way the driver launches it: (2, 2) is (2, 2, 1). A grid of none
    (not recorded) stays empty."""
    if type(grid) is tuple and len(grid) == 3:
        return grid
    g = tuple(int(x) for x in grid)
    return g + (1,) * (3 - len(g)) if 0 < len(g) < 3 else g


@dataclass(frozen=True)
class CallSite:
    """The line of the user's code that launched a kernel: the first frame of the Python stack outside
    Triton, torch, kinspect, the standard library and the kernel's own package (kinspect.hooks.callsite).
    `function` "autograd backward" with no file: the launch came from autograd's engine, no user frame
    on its stack."""

    file: str
    line: int
    function: str = ""

    def describe(self) -> str:
        return f"{self.file}:{self.line} in {self.function}" if self.file else self.function


@dataclass(frozen=True)
class LaunchSignature:
    """Launches of one variant with the same grid and arguments, from one process."""

    grid: tuple[int, ...]
    args: tuple[ArgSpec, ...]
    calls: int
    pid: int = 0
    rank: int | None = None
    site: CallSite | None = None       # where the first launch with this key came from


@dataclass(frozen=True)
class ProcessLaunches:
    pid: int
    rank: int | None
    host: str
    calls: int
    gpu_ms: float | None = None      # this process's timed GPU time of the variant (capture --time)
    timed: int = 0                   # its launches that were timed
    first_at: float | None = None    # when this process first launched it (seconds since the epoch)
    launches_before: int | None = None   # launches of every kernel this process had made before that


@dataclass(frozen=True)
class GpuTime:
    """Device time of a variant's timed launches: their count, sum and a bounded sample."""

    calls: int
    total_ms: float
    samples_ms: tuple[float, ...] = ()   # at most launches.SAMPLES, drawn uniformly (reservoir)

    @property
    def median_ms(self) -> float | None:
        if not self.samples_ms:
            return None
        s = sorted(self.samples_ms)
        mid = len(s) // 2
        return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2


@dataclass(frozen=True)
class Launches:
    """How a variant was launched in a captured program: call count, grids and distinct argument
    signatures (the most frequent, capped; the rest counted in other_calls), per process, and the
    device time when the capture timed it. Launches an autotuner made while benchmarking configs
    (triton.autotune, Inductor's) are not among them: they are counted, and timed, apart."""

    calls: int
    grids: tuple[tuple[tuple[int, ...], int], ...] = ()
    signatures: tuple[LaunchSignature, ...] = ()
    other_calls: int = 0
    processes: tuple[ProcessLaunches, ...] = ()
    gpu: GpuTime | None = None
    tuning_calls: int = 0           # launches inside an autotuner's benchmark (kinspect.hooks.tuning)
    tuning_ms: float = 0.0          # their device time, when the capture timed launches

    def top(self) -> LaunchSignature | None:
        """The most frequent launch (what a replay re-runs)."""
        return max(self.signatures, key=lambda s: s.calls, default=None)


@dataclass(frozen=True)
class TunedConfig:
    """One of a triton.autotune's configs: the constexpr values it sets and its launch options."""

    kwargs: dict[str, Any]
    options: dict[str, Any] = field(default_factory=dict)   # num_warps, num_stages, ... as the config sets them

    def describe(self) -> str:
        values = ", ".join(f"{k}={v}" for k, v in self.kwargs.items())
        options = ", ".join(f"{k}={v}" for k, v in self.options.items())
        return "; ".join(p for p in (values, options) if p) or "(no values)"


@dataclass(frozen=True)
class ConfigTiming:
    """What the autotuner measured for one config: do_bench's figures in ms (median, p20, p80 with
    Triton's default benchmark), none when nothing was measured; `failed` when the benchmark gave
    the config up (it did not compile, or ran out of resources)."""

    config: TunedConfig
    ms: tuple[float, ...] = ()
    failed: bool = False


@dataclass(frozen=True)
class AutotuneDecision:
    """Which config triton.autotune chose for one key of one kernel, and why.

    `key` is the autotuner's key: the values of its `key=` arguments, then the dtypes of the tensor
    arguments. `how`: "benchmarked" (timed now), "cache" (read from Triton's on-disk autotune cache),
    "single" (one config left after pruning: nothing to compare), "interpreter" (under
    TRITON_INTERPRET: nothing is timed, the first config is taken)."""

    kernel: str
    key: tuple
    key_names: tuple[str, ...]
    best: TunedConfig
    timings: tuple[ConfigTiming, ...] = ()
    how: str = "benchmarked"
    bench_s: float | None = None
    configs: int = 0                 # configs the autotuner holds (before pruning)
    pid: int = 0
    rank: int | None = None
    host: str = ""

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict) -> "AutotuneDecision":
        def config(c):
            return TunedConfig(dict(c.get("kwargs") or {}), dict(c.get("options") or {}))

        return cls(kernel=str(d["kernel"]), key=tuple(d.get("key") or ()), key_names=tuple(d.get("key_names") or ()),
                   best=config(d["best"]),
                   timings=tuple(ConfigTiming(config(t["config"]), tuple(float(x) for x in t.get("ms") or ()),
                                              bool(t.get("failed"))) for t in d.get("timings") or ()),
                   how=str(d.get("how", "benchmarked")),
                   bench_s=None if d.get("bench_s") is None else float(d["bench_s"]), configs=int(d.get("configs", 0)),
                   pid=int(d.get("pid", 0)), rank=d.get("rank"), host=str(d.get("host", "")))


@dataclass(frozen=True)
class SourceRef:
    """Where the kernel's Python source is: file and first line of the `def`."""

    file: str
    line: int
    text: str = ""


@dataclass(frozen=True)
class Variant:
    """One compiled variant of one kernel."""

    kernel: str
    hash: str
    target: Target
    offline: bool
    signature: dict[str, str]
    constexprs: dict[str, Any]
    attributes: dict[str, Any]
    options: dict[str, Any]
    stages: tuple[StageFile, ...]
    times: CompileTimes | None
    cache_hit: bool
    triton_version: str
    source: SourceRef | None = None
    origin: str = "kinspect"  # kinspect | capture | triton-cache | triton-dump | spine-dump | ...
    created: str = ""
    notes: tuple[str, ...] = ()
    name: str = ""  # the folder name in a store
    path: str = ""  # the folder on disk, set when read back; not saved
    extra: dict[str, Any] = field(default_factory=dict)
    launches: Launches | None = None  # recorded by `kinspect capture` (record_version 2)
    # what could not be read of it from its store (a stage file leading out of its folder, a launch
    # file that is not one), one line each; set when read back, not saved
    problems: tuple[str, ...] = ()

    @property
    def ran(self) -> bool:
        """The captured program launched this variant (not only an autotuner benchmarking it)."""
        return self.launches is not None and self.launches.calls > 0

    def stage(self, name: str) -> StageFile | None:
        for s in self.stages:
            if s.name == name:
                return s
        return None

    def specialization(self) -> dict[str, str]:
        """How the JIT specialized each runtime argument, as `facet: shown value`: its type, and whether
        it was divisible by 16 (a pointer: 16-byte aligned), which decides vector loads. Two variants
        with the same constexprs and options differ here."""
        out = {}
        for arg, ty in self.signature.items():
            if ty == "constexpr":
                continue
            out[f"type:{arg}"] = f"{arg}:{ty}"
            by16 = (self.attributes.get(arg) or {}).get("tt.divisibility")
            if ty.startswith("*"):
                out[f"align:{arg}"] = f"{arg} aligned" if by16 else f"{arg} unaligned"
            elif ty.startswith("i"):
                out[f"align:{arg}"] = f"{arg}%16=0" if by16 else f"{arg}%16!=0"
        return out

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("path")
        d.pop("problems")
        d["record_version"] = RECORD_VERSION
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any], path: str = "") -> "Variant":
        d = dict(d)
        version = d.pop("record_version", None)
        if version not in READABLE_VERSIONS:
            raise ValueError(f"record_version {version!r} (this kinspect reads "
                             f"{', '.join(map(str, READABLE_VERSIONS))})")
        times = d.get("times")
        source = d.get("source")
        return cls(
            **{**d,
               "target": Target(**d["target"]),
               "stages": tuple(StageFile(**s) for s in d["stages"]),
               "times": CompileTimes(times["ir_initialization_us"],
                                     tuple((n, us) for n, us in times["stages"]),
                                     times["store_results_us"], int(times.get("startup_us", 0))) if times else None,
               "source": SourceRef(**source) if source else None,
               "notes": tuple(d.get("notes", ())),
               "launches": launches_from_json(d.get("launches")),
               "path": path})


def launches_from_json(d: dict | None) -> Launches | None:
    """Launches as record.json stores them (dataclasses.asdict), or None."""
    if not d:
        return None
    gpu = d.get("gpu")
    return Launches(
        calls=int(d["calls"]),
        grids=tuple((tuple(int(x) for x in g), int(n)) for g, n in d.get("grids", ())),
        signatures=tuple(LaunchSignature(grid=tuple(int(x) for x in s["grid"]),
                                         args=tuple(arg_from_json(a) for a in s["args"]), calls=int(s["calls"]),
                                         pid=int(s.get("pid", 0)), rank=s.get("rank"),
                                         site=CallSite(**s["site"]) if s.get("site") else None)
                         for s in d.get("signatures", ())),
        other_calls=int(d.get("other_calls", 0)),
        processes=tuple(ProcessLaunches(**p) for p in d.get("processes", ())),
        gpu=GpuTime(int(gpu["calls"]), float(gpu["total_ms"]), tuple(float(x) for x in gpu.get("samples_ms", ())))
        if gpu else None,
        tuning_calls=int(d.get("tuning_calls", 0)), tuning_ms=float(d.get("tuning_ms", 0.0)))


def arg_from_json(a: dict) -> ArgSpec:
    return ArgSpec(**{**a, "value": _frozen(a.get("value")), "shape": tuple(a.get("shape", ())),
                      "strides": tuple(a.get("strides", ()))})


def _frozen(value):
    """A JSON value as a hashable one (launch signatures are counted in dicts): lists as tuples."""
    if isinstance(value, list):
        return tuple(_frozen(x) for x in value)
    if isinstance(value, dict):
        return tuple((str(k), _frozen(x)) for k, x in value.items())
    return value


def natural(v: Variant) -> tuple:
    """Kernel, target, then constexprs and options by value: BLOCK_SIZE=32 before 128. The order of
    `kinspect ls`, whose row numbers name variants (`kinspect show 2`)."""
    def key(x):
        return (0, x, "") if isinstance(x, (int, float)) and not isinstance(x, bool) else (1, 0, str(x))

    return (v.kernel, str(v.target), tuple((k, key(x)) for k, x in sorted(v.constexprs.items())),
            key(v.options.get("num_warps")), key(v.options.get("num_stages")), v.name)
