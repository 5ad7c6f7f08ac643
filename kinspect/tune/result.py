"""What a tune found: every candidate with what became of it (pruned, failed, wrong, timed), the
winner and the autotuners' picks; stored beside the variant (`tune.json`) and read back for `report`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kinspect.core import records
from kinspect.core.errors import KinspectError
from kinspect.tune.space import Candidate

RESULT_FILE = "tune.json"
VERSION = 1
STATUSES = ("timed", "pruned", "failed", "wrong")


@dataclass(frozen=True)
class TrialCode:
    """The figures of a candidate's compiled code a trial keeps (None: not known)."""

    registers: int | None = None
    spills: int | None = None
    shared_bytes: int | None = None
    occupancy: float | None = None
    occupancy_limiter: str | None = None
    instructions: int | None = None
    vector_instructions: int | None = None

    @classmethod
    def of(cls, d: dict | None) -> "TrialCode":
        """From a variant's figures as a dict (kinspect.analysis.summary.VariantMetrics.to_json, a sweep
        worker's metrics) or a stored trial's code (tunes stored before kinspect_json 1 say `vector`)."""
        d = d or {}
        num = lambda k, f: None if d.get(k) is None else f(d[k])     # noqa: E731
        vector = d.get("vector_instructions", d.get("vector"))
        return cls(registers=num("registers", int), spills=num("spills", int), shared_bytes=num("shared_bytes", int),
                   occupancy=num("occupancy", float), occupancy_limiter=num("occupancy_limiter", str),
                   instructions=num("instructions", int), vector_instructions=None if vector is None else int(vector))

    def to_json(self) -> dict:
        return {k: v for k, v in vars(self).items() if v is not None}

    @classmethod
    def from_json(cls, d: dict) -> "TrialCode":
        """A trial's code as `of` reads it (tunes stored before kinspect_json 1 say `vector`): how records
        reads the code a Trial holds."""
        return cls.of(d)


CODE = tuple(f for f in TrialCode.__dataclass_fields__)     # the figures a trial keeps


@dataclass(frozen=True)
class Baseline:
    """The original config timed on the GPU that timed a trial, in the same tune: a tune timed on several
    GPUs compares each trial with the original on its own GPU."""

    median_ms: float
    p20_ms: float
    p80_ms: float

    def to_json(self) -> dict:
        return {"median_ms": self.median_ms, "p20_ms": self.p20_ms, "p80_ms": self.p80_ms}


@dataclass(frozen=True)
class Trial:
    candidate: Candidate
    status: str                   # timed, pruned (resources rule it out), failed (compile/launch), wrong (output)
    why: str = ""                 # the reason for pruned/failed/wrong; the check's line for timed
    grid: tuple[int, ...] = ()
    median_ms: float | None = None
    p20_ms: float | None = None
    p80_ms: float | None = None
    runs: int = 0
    code: TrialCode = TrialCode()
    findings: tuple[str, ...] = ()                  # finding kinds of its compiled code
    gpu: str = ""                 # the GPU that ran it, where a tune ran on several ("GPU 1 (NVIDIA H100 ...)")
    baseline: Baseline | None = None    # the original on that GPU, where it is not the GPU that timed the original

    @property
    def ran(self) -> bool:
        """It ran on the device (a trial that cost device time): timed, wrong, or failed at launch."""
        return self.status in ("timed", "wrong") or self.status == "failed" and self.why.startswith("run:")

    def to_json(self) -> dict:
        return {"candidate": self.candidate.to_json(), "status": self.status, "why": self.why, "grid": list(self.grid),
                "median_ms": self.median_ms, "p20_ms": self.p20_ms, "p80_ms": self.p80_ms, "runs": self.runs,
                "code": self.code.to_json(), "findings": list(self.findings),
                **({"gpu": self.gpu} if self.gpu else {}),
                **({"baseline": self.baseline.to_json()} if self.baseline else {})}

    @classmethod
    def from_json(cls, d: dict) -> "Trial":
        """A stored trial, or one as tune --json prints it (`finding_kinds`, `gpu` null), by its fields."""
        status = str(d["status"])
        if status not in STATUSES:
            raise KinspectError(f"a trial's status '{status[:20]}' is none of {', '.join(STATUSES)}")
        return records.from_json(cls, {**_renamed(d), "gpu": d.get("gpu") or ""})


@dataclass(frozen=True)
class Speedup:
    ratio: float
    low: float       # original's fast quantile over the other's slow one
    high: float

    @property
    def spread(self) -> float:
        return (self.high - self.low) / 2

    def describe(self) -> str:
        return f"{self.ratio:.2f}x ± {self.spread:.2f}"


def speedup(a: Trial, b: Trial, original: Trial | None = None) -> Speedup | None:
    """a's time / b's time, with the spread their p20..p80 give. Where a tune ran on several GPUs, each
    time is first put on the GPU that timed `original` (default: `a`) by the original's timing on its own
    GPU (a trial's baseline)."""
    if not (a.median_ms and b.median_ms and b.p20_ms and b.p80_ms):
        return None
    fa, fb = _factor(a, original or a), _factor(b, original or a)
    return Speedup(a.median_ms * fa / (b.median_ms * fb), (a.p20_ms or 0) * fa / (b.p80_ms * fb),
                   (a.p80_ms or 0) * fa / (b.p20_ms * fb))


def _factor(t: Trial, original: Trial) -> float:
    """What turns `t`'s times into times on the original's GPU: 1 on that GPU (no baseline)."""
    if t.baseline is None or original.baseline is not None or not original.median_ms or not t.baseline.median_ms:
        return 1.0
    return original.median_ms / t.baseline.median_ms


def fastest(trials: list[Trial], origin: str) -> Trial | None:
    """The fastest correct timed trial among `origin`'s candidates, each as the original's GPU would time it
    (scaled_ms); kinspect's also counts the original: its winner is never slower than what the program ran."""
    origins = (origin, "original") if origin == "kinspect" else (origin,)
    original = next((t for t in trials if t.candidate.origin == "original"), None)
    timed = [t for t in trials if t.candidate.origin in origins and t.status == "timed" and t.median_ms is not None]
    return min(timed, key=lambda t: scaled_ms(t, original)) if timed else None


def scaled_ms(t: Trial, original: Trial | None) -> float | None:
    """A timed trial's median as the original's GPU would have timed it: the same, on that GPU; from its
    ratio to the original on its own GPU, on another. Ranks the trials of a tune timed on several GPUs
    (each row still shows what its GPU measured)."""
    if t.median_ms is None:
        return None
    return t.median_ms * (_factor(t, original) if original is not None else 1.0)


@dataclass(frozen=True)
class TuneResult:
    kernel: str
    variant: str                  # the variant folder's name
    target: str
    findings: tuple[str, ...]     # the finding kinds the tune started from
    trials: tuple[Trial, ...]
    seconds: float = 0.0
    budget: str = ""              # "--trials 12" / "--budget 60 s"
    notes: tuple[str, ...] = ()
    torch: str = ""               # the torch whose Inductor heuristics gave its and max_autotune's configs

    def _by(self, origin: str) -> list[Trial]:
        return [t for t in self.trials if t.candidate.origin == origin]

    @property
    def original(self) -> Trial | None:
        return next(iter(self._by("original")), None)

    def best(self, origin: str) -> Trial | None:
        """The fastest correct timed trial among `origin`'s candidates (kinspect.tune.result.fastest)."""
        return fastest(self.trials, origin)

    def scaled_ms(self, t: Trial) -> float | None:
        """`t`'s median as the original's GPU would have timed it (kinspect.tune.result.scaled_ms)."""
        return scaled_ms(t, self.original)

    def vs_original(self, t: Trial) -> float | None:
        """What the program ran over `t`'s time, both on `t`'s GPU; None when either was not timed."""
        sp = speedup(self.original, t) if self.original is not None else None
        return sp.ratio if sp is not None else None

    @property
    def gpus(self) -> list[str]:
        """The GPUs the trials ran on, where the tune ran on several (else empty)."""
        return list(dict.fromkeys(t.gpu for t in self.trials if t.gpu))

    def trials_of(self, origin: str) -> int:
        """Candidates of `origin` that ran on the device (pruned ones and compile failures cost no device time)."""
        return sum(1 for t in self._by(origin) if t.ran)

    def trials_to_reach(self, median_ms: float) -> tuple[int, Trial] | None:
        """How soon kinspect had a result at most `median_ms` (as the original's GPU times it: scaled_ms):
        (n, trial), n its trials that ran up to and including the first timed one that fast, counted in the
        order they ran as trials_of counts them (the trials are stored in that order); (0, the original)
        when what the program ran already is that fast; None when none was."""
        orig = self.original
        if orig is not None and orig.status == "timed" and orig.median_ms is not None and orig.median_ms <= median_ms:
            return 0, orig
        n = 0
        for t in self._by("kinspect"):
            n += t.ran
            if t.status == "timed" and t.median_ms is not None and self.scaled_ms(t) <= median_ms:
                return n, t
        return None

    def to_json(self) -> dict:
        return {"version": VERSION, "kernel": self.kernel, "variant": self.variant, "target": self.target,
                "findings": list(self.findings), "trials": [t.to_json() for t in self.trials],
                "seconds": round(self.seconds, 2), "budget": self.budget, "notes": list(self.notes),
                "torch": self.torch}

    @classmethod
    def from_json(cls, d: dict) -> "TuneResult":
        """Stored (tune.json, `version`), or as a command printed it (tune/vec-report --tune --json:
        `kinspect_json`, `finding_kinds`, its summary), by its fields."""
        if d.get("version", VERSION if d.get("kinspect_json") == 1 else None) != VERSION:
            raise KinspectError(f"tune result version {d.get('version')!r}, this kinspect reads {VERSION}")
        return records.from_json(cls, {k: v for k, v in _renamed(d).items()
                                       if k not in ("version", "kinspect_json", "error", "summary")})


def _renamed(d: dict) -> dict:
    """`d` with a command's `finding_kinds` under the record's name, `findings`."""
    return {"findings" if k == "finding_kinds" else k: v for k, v in d.items()}


def write(folder: str | Path, result: TuneResult) -> Path:
    import json

    from kinspect.files.store import write_atomic

    path = Path(folder) / RESULT_FILE
    try:
        write_atomic(path, json.dumps(result.to_json(), indent=1))
    except OSError as e:
        raise KinspectError(f"cannot store the tune in '{path}': {e.strerror}") from None
    return path


def read(folder: str | Path) -> TuneResult | None:
    """The tune stored beside a variant; None when it was never tuned. A malformed file is an error."""
    import json

    path = Path(folder) / RESULT_FILE
    if not path.is_file() or path.is_symlink():
        return None
    try:
        return TuneResult.from_json(json.loads(path.read_text()))
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise KinspectError(f"{path}: not a tune result kinspect can read ({type(e).__name__}: {str(e)[:80]})") \
            from None
