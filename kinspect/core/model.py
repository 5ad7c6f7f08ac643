"""Frozen records shared across kinspect: targets, stages, compile times and variants.

A Variant is what kinspect stores per compiled kernel: its target, specialization, stage files
and JIT times. It round-trips through `record.json` (see store.py) and never holds Triton objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field, asdict
from typing import Any, ClassVar

from kinspect.core import records

RECORD_VERSION = 2
# the kinds of an assumed value that are a wrapper's input, set by one --from call: made up, or read
# from the call the project's test makes (kinspect.compile.test_calls)
WRAPPER_INPUTS = ("input", "tested")
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


def _frozen(value):
    """A JSON value as a hashable one (launch signatures are counted in dicts): lists as tuples."""
    if isinstance(value, list):
        return tuple(_frozen(x) for x in value)
    if isinstance(value, dict):
        return tuple((str(k), _frozen(x)) for k, x in value.items())
    return value


@dataclass(frozen=True)
class ArgSpec:
    """One argument of a launch: a tensor's shape, strides, dtype and device, or a scalar's value
    (constexprs included, as the launch passed them)."""

    name: str
    kind: str                       # tensor | int | float | bool | none | str | tensordesc | dtype | other
    value: Any = field(default=None, metadata={"read": _frozen})    # a scalar's value; a short repr for "other"
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

    kwargs: dict[str, Any] = field(default_factory=dict)    # autotune.json may leave them out: none set
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
        """A decision as autotune.json keeps it (checked first: kinspect.files.schema.DECISION), read by its
        fields; the file may leave out the key, which is then empty."""
        return records.from_json(cls, {"key": [], "key_names": [], **d})


@dataclass(frozen=True)
class SourceRef:
    """Where the kernel's Python source is: file and first line of the `def`."""

    file: str
    line: int
    text: str = ""


@dataclass(frozen=True)
class Loaded:
    """What the driver reported for a variant's kernel loaded on the device (compiled there by kinspect)."""

    registers: int
    spills: int
    max_threads: int = 0


@dataclass(frozen=True)
class Retarget:
    """A variant whose LLVM IR kinspect compiled for a CPU (--retarget)."""

    spec: str                 # the CPU[:FEATURES] it was compiled for, as given
    source: str               # the variant whose LLVM IR it is
    cpu: str = ""
    features: str = ""


@dataclass(frozen=True)
class UserConfig:
    """An autotune config of a user kernel, as its record keeps it (kinspect.compile.autotune.TuneConfig)."""

    index: int
    text: str = ""
    kwargs: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    pre_hook: str | None = None


@dataclass(frozen=True)
class UserTuning:
    """What a user kernel's autotune and heuristics wrappers made of its launch (kinspect.compile.autotune.
    Applied): the config compiled, how many the author wrote and pruning kept, heuristic values, the key."""

    config: UserConfig | None = None
    configs: int = 0
    kept: tuple[int, ...] = ()
    heuristics: dict[str, Any] = field(default_factory=dict)
    key: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class AssumedValue:
    """One value kinspect assumed for a user kernel's compile (kinspect.compile.assume.Assumed); records
    from before it was typed keep only its `text`."""

    name: str = ""
    spec: str = ""
    why: str = ""
    kind: str = ""        # "pow2", "input" (a wrapper's made-up input), "tested" (one read from its test), ...
    constexpr: bool = False
    text: str = ""


@dataclass(frozen=True)
class UserRecord:
    """How a kernel from the user's file was compiled (kinspect.compile.user.UserKernel.record): the
    file and kernel to load it again (for timing), the values given on the command line, how the file
    was loaded, its autotune config, what was assumed, and the example launch as data."""

    kernel: str = ""                       # FILE:KERNEL as loaded (its path absolute)
    args: tuple[str, ...] = ()             # --arg values as given, "name=spec"
    constexprs: dict[str, str] = field(default_factory=dict)     # -p values as given
    config: int | None = None              # --config
    loaded: str = ""                       # how the file was loaded, one line
    declared: bool = False                 # the file declares kinspect_examples for it
    autotune: UserTuning | None = None
    launch: str = ""                       # where the example launch came from, one line
    assumed: tuple[AssumedValue, ...] = ()
    example: dict | None = None            # the launch as data (kinspect.files.schema.USER_EXAMPLE; checked where read)
    launch_index: int | None = None        # which of the file's launches gave the values
    called: str = ""                       # the --from call that gave them ("from" in the record)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        called, index = d.pop("called"), d.pop("launch_index")
        if called or index is not None:
            d.update({"launch_index": index, "from": called})
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "UserRecord":
        """From a record's JSON (schema-checked as free JSON): a value of the wrong kind is a TypeError,
        which the store's reader reports as the record's problem."""
        def obj(x, what: str) -> dict:
            if x is None:
                return {}
            if not isinstance(x, dict):
                raise TypeError(f"user.{what}: not an object")
            return x

        def seq(x, what: str) -> list:
            if x is None:
                return []
            if not isinstance(x, (list, tuple)):
                raise TypeError(f"user.{what}: not a list")
            return list(x)

        obj(d, "")
        tuning = obj(d.get("autotune"), "autotune")
        config = obj(tuning.get("config"), "autotune.config")
        example = d.get("example")
        return cls(
            kernel=str(d.get("kernel") or ""), args=tuple(str(a) for a in seq(d.get("args"), "args")),
            constexprs={str(k): str(x) for k, x in obj(d.get("constexprs"), "constexprs").items()},
            config=None if d.get("config") is None else int(d["config"]), loaded=str(d.get("loaded") or ""),
            declared=bool(d.get("declared")), launch=str(d.get("launch") or ""),
            autotune=UserTuning(
                config=UserConfig(index=int(config["index"]), text=str(config.get("text") or ""),
                                  kwargs=dict(obj(config.get("kwargs"), "autotune.config.kwargs")),
                                  options=dict(obj(config.get("options"), "autotune.config.options")),
                                  pre_hook=config.get("pre_hook")) if config else None,
                configs=int(tuning.get("configs") or 0),
                kept=tuple(int(k) for k in seq(tuning.get("kept"), "autotune.kept")),
                heuristics=dict(obj(tuning.get("heuristics"), "autotune.heuristics")),
                key=dict(obj(tuning.get("key"), "autotune.key")),
                notes=tuple(str(n) for n in seq(tuning.get("notes"), "autotune.notes"))) if tuning else None,
            assumed=tuple(AssumedValue(**{k: a[k] for k in ("name", "spec", "why", "kind", "constexpr", "text")
                                          if k in a}) if isinstance(a, dict) else AssumedValue(text=str(a))
                          for a in seq(d.get("assumed"), "assumed")),
            example=None if example is None else obj(example, "example"), launch_index=d.get("launch_index"),
            called=str(d.get("from") or ""))


# the keys of the free `extra` dict stores before kinspect_json 1 kept, now Variant's own fields
EXTRA_KEYS = ("backend", "request", "user", "loaded", "retarget", "retargeted_from", "cpu", "features", "trace",
              "trace_event")


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
    launches: Launches | None = None  # recorded by `kinspect capture` (record_version 2)
    backend: str = ""         # the Triton backend's name where it is not the target's (spine_triton for cpu)
    request: str = ""         # what decided kinspect's compile of it (kinspect.compile.variant.request_key)
    user: UserRecord | None = None        # a kernel from the user's file: how it was compiled
    loaded: Loaded | None = None          # the driver's figures for it, loaded on the device
    retarget: Retarget | None = None      # its LLVM IR compiled for a CPU by kinspect
    trace: str = ""                       # the tritonparse trace it was read from
    trace_event: int | None = None        # its compilation event's line in that trace
    # what could not be read of it from its store (a stage file leading out of its folder, a launch
    # file that is not one), one line each; set when read back, not saved
    problems: tuple[str, ...] = ()

    # fields record.json does not keep; every other field is its key, required where the field has
    # no default (kinspect.files.schema.RECORD is made from this list)
    UNSAVED: ClassVar[tuple] = ("path", "problems")

    @property
    def num_warps(self) -> int | None:
        """The warps it was compiled with (Triton's option), where its record says."""
        return self.options.get("num_warps")

    @property
    def num_stages(self) -> int | None:
        return self.options.get("num_stages")

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
        for k in self.UNSAVED:
            d.pop(k)
        d["user"] = self.user.to_json() if self.user is not None else {}
        d["record_version"] = RECORD_VERSION
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any], path: str = "") -> "Variant":
        """A record as record.json keeps it, read by its fields (kinspect.core.records.from_json), an
        older store's included: a new field needs no reader."""
        d = dict(d)
        version = d.pop("record_version", None)
        if version not in READABLE_VERSIONS:
            raise ValueError(f"record_version {version!r} (this kinspect reads "
                             f"{', '.join(map(str, READABLE_VERSIONS))})")
        extra = d.pop("extra", None) or {}      # stores before the fields below: one free dict
        for k in ("backend", "request", "user", "trace", "trace_event"):
            if k in extra and not d.get(k):
                d[k] = extra[k]
        d["loaded"] = d.get("loaded") or extra.get("loaded")
        if d.get("retarget") is None and extra.get("retarget"):
            d["retarget"] = {"spec": extra["retarget"], "source": extra.get("retargeted_from", ""),
                             "cpu": extra.get("cpu", ""), "features": extra.get("features", "")}
        return records.from_json(cls, {**d, "path": path})


def launches_from_json(d: dict | None) -> Launches | None:
    """Launches as record.json stores them (dataclasses.asdict), or None."""
    return records.from_json(Launches, d) if d else None


def arg_from_json(a: dict) -> ArgSpec:
    return records.from_json(ArgSpec, a)


def natural(v: Variant) -> tuple:
    """Kernel, target, then constexprs and options by value: BLOCK_SIZE=32 before 128. The order of
    `kinspect ls`, whose row numbers name variants (`kinspect show 2`)."""
    def key(x):
        return (0, x, "") if isinstance(x, (int, float)) and not isinstance(x, bool) else (1, 0, str(x))

    return (v.kernel, str(v.target), tuple((k, key(x)) for k, x in sorted(v.constexprs.items())),
            key(v.num_warps), key(v.num_stages), v.name)
