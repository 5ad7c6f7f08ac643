"""The GPU side of a tune: the captured launch replayed with a candidate's blocks, warps and stages,
its output checked against the original config's on the same inputs, and timed.

`Replayer` checks and times in this process (`OneByOne` runs a round's candidates through it in turn);
`OnEveryGpu` runs a round on every GPU an executor has, a Replayer in each GPU's worker (`trial_job`).
Tests hand the search another object with the same two methods (`check`, `time`), or an executor of
their own, never a result made up in the product.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kinspect.tune.space import Candidate


class Replayer:
    """One captured launch (kinspect.replay.spec.ReplaySpec) on `device`: fresh arguments of the
    captured shapes, dtypes and strides, built once; every run starts from a copy of them laid out as
    they are (kinspect.replay.args.copy_as_laid_out), so each candidate, and the original, reads the
    same bytes at the same strides whatever an earlier run wrote."""

    def __init__(self, spec, device: str = "cuda"):
        from kinspect.compile.targets import resolve
        from kinspect.replay.args import values

        self.spec = spec
        self.device = device
        vals = values(spec.args, spec.signature, spec.attributes, device)
        self.inputs = vals.args
        self.constexprs = vals.constexprs
        # the captured launch options (fp fusion, maxnreg, ...) but those a candidate sets
        allowed = resolve(spec.target).backend.launch_options
        self.options = {k: v for k, v in spec.options.items() if k in allowed and k not in ("num_warps", "num_stages")}
        self._fn = None
        self._reference: Reference | None = None

    def _launch(self, c: Candidate, grid, args: dict):
        if self._fn is None:
            from kinspect.compile import jit_function
            from kinspect.compile.replayed import kernel

            self._fn = jit_function(kernel(self.spec))
        consts = {**self.constexprs, **dict(c.constexprs)}
        return self._fn[tuple(grid)](**args, **consts, **self.options, num_warps=c.num_warps,
                                     num_stages=c.num_stages)

    def _run(self, c: Candidate, grid) -> dict:
        """The tensor arguments after one run of `c` on a fresh copy of the inputs."""
        import torch

        args = self._copy()
        self._launch(c, grid, args)
        if torch.device(self.device).type == "cuda":
            torch.cuda.synchronize()
        return {k: v for k, v in args.items() if isinstance(v, torch.Tensor)}

    def reference(self, original: Candidate, grid) -> "Reference":
        """The original config's outputs (made once): the tensors its run changed, and whether a second run
        on the same inputs gives the same (if not, no candidate can be told right or wrong)."""
        from kinspect.bench.check import compare

        if self._reference is None:
            first = self._run(original, grid)
            written = {k: v for k, v in first.items() if not _same_bytes(v, self.inputs[k])}
            again = self._run(original, grid)
            problem = ""
            for name, ref in written.items():
                chk = compare(again[name], ref, precision=_precision(ref), against="original config's first run")
                if not chk.ok:
                    problem = f"{name}: {chk.describe()}"
                    break
            del again
            self._reference = Reference(written, problem)
        return self._reference

    def check(self, c: Candidate, grid, original: Candidate, original_grid) -> tuple[bool, str]:
        """Run `c`; compare each tensor the original wrote with the original's (bench's tolerances for its
        dtype); every tensor the original left as it was must be left byte for byte. (ok, the worst
        comparison in words)."""
        from kinspect.bench.check import compare

        ref = self.reference(original, original_grid)
        if ref.unreproducible:
            return False, (f"not checkable: the original config gives another output on a second run on the same "
                           f"inputs ({ref.unreproducible})")
        got = self._run(c, grid)
        for name, t in got.items():
            if name not in ref.outputs and not _same_bytes(t, self.inputs[name]):
                return False, f"{name}: WRONG: written, where the original config leaves it as it was"
        worst = None
        for name, r in ref.outputs.items():
            chk = compare(got[name], r, precision=_precision(r), against="original config's output")
            if worst is None or not chk.ok or chk.error > worst[1].error:
                worst = (name, chk)
                if not chk.ok:
                    break
        if worst is None:
            return True, "writes no tensor argument, as the original config"
        return worst[1].ok, f"{worst[0]}: {worst[1].describe()}"

    def time(self, c: Candidate, grid, *, rep_ms: int = 100):
        """kinspect.bench.timing.Timing of `c` on the captured inputs (do_bench, L2 flushed)."""
        from kinspect.bench.timing import time_gpu

        args = self._copy()      # a kernel that writes its inputs (in_out_ptr) leaves the check's inputs alone
        return time_gpu(lambda: self._launch(c, grid, args), rep_ms=rep_ms)

    def _copy(self) -> dict:
        import torch

        from kinspect.replay.args import copy_as_laid_out

        return {k: copy_as_laid_out(v) if isinstance(v, torch.Tensor) else v for k, v in self.inputs.items()}


@dataclass(frozen=True)
class TrialRun:
    """What one candidate's run on the device gave: checked (ok, and the check's line), then timed (a
    kinspect.bench.stats.Summary of wall times, None when not ok); `error` when its launch failed; `gpu` and
    `baseline` (the original's Summary on that GPU) where a tune runs on several GPUs."""

    ok: bool = False
    line: str = ""
    wall: object = None
    error: str = ""
    gpu: str = ""
    baseline: object = None


def run_one(runner, c: Candidate, grid, original: Candidate, original_grid) -> TrialRun:
    """Check `c` against the original's output, then time it, through a runner with check() and time()."""
    try:
        ok, line = runner.check(c, grid, original, original_grid) if c.key() != original.key() \
            else (True, "the reference")
        return TrialRun(ok, line, runner.time(c, grid).wall if ok else None)
    except Exception as e:     # noqa: BLE001 - a launch that fails is a candidate that failed
        return TrialRun(error=f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}")


class OneByOne:
    """A runner's candidates run in turn in this process (a Replayer, or the objects tests hand in)."""

    devices = 1

    def __init__(self, runner):
        self.runner = runner

    def run_all(self, batch: list, original: Candidate, original_grid, *, stop=lambda i: False,
                each=lambda i, ran: None) -> list[TrialRun | None]:
        """Each (candidate, grid) of `batch` run in turn until `stop(i)`; `each(i, ran)` as each finishes;
        None for those not run."""
        out: list[TrialRun | None] = [None] * len(batch)
        for i, (c, grid) in enumerate(batch):
            if stop(i):
                break
            out[i] = run_one(self.runner, c, grid, original, original_grid)
            each(i, out[i])
        return out


_REPLAYERS: dict = {}     # in a GPU worker: the Replayer of each captured launch it has run
_BASELINES: dict = {}     # in a GPU worker: the original config's wall times on its GPU, per captured launch


def trial_job(variant_path: str, candidate: dict, grid: list, original: dict, original_grid: list) -> dict:
    """One candidate of a tune on this worker's GPU (a kinspect.core.executor job): the captured launch at
    `variant_path` replayed (its inputs made once per worker), checked against the original config's
    output made on this GPU, and timed; with it, the original's time on this GPU (timed once per worker,
    the first time it runs a trial of this launch), so the trial is compared with the original on the same
    GPU wherever the executor placed it. Plain values in and out."""
    from kinspect.files.store import read_record
    from kinspect.replay.spec import from_variant

    if variant_path not in _REPLAYERS:
        _REPLAYERS[variant_path] = Replayer(from_variant(read_record(Path(variant_path))))
    rep = _REPLAYERS[variant_path]
    c, o = Candidate.from_json(candidate), Candidate.from_json(original)
    ran = run_one(rep, c, tuple(grid), o, tuple(original_grid))
    if c.key() == o.key() and ran.wall is not None:
        _BASELINES.setdefault(variant_path, ran.wall)
    if variant_path not in _BASELINES:
        _BASELINES[variant_path] = rep.time(o, tuple(original_grid)).wall
    base = _BASELINES[variant_path]
    return {"ok": ran.ok, "line": ran.line, "error": ran.error, "wall": None if ran.wall is None else vars(ran.wall),
            "baseline": vars(base)}


class OnEveryGpu:
    """A tune's candidates run on every GPU an executor has (kinspect.core.executor: one worker per GPU
    here, or a Ray cluster's GPUs), each checked against the original's output made on its own GPU. Each
    worker times the original on its GPU once, so a trial that another GPU than the original's timed
    carries the original's time there (its baseline) and is compared with that."""

    def __init__(self, variant_path: str, ex):
        self.path = str(variant_path)
        self.ex = ex
        self.home = None        # the GPU that timed the original's own trial

    @property
    def devices(self) -> int:
        return len(self.ex.gpus)

    def run_all(self, batch: list, original: Candidate, original_grid, *, stop=lambda i: False,
                each=lambda i, ran: None) -> list[TrialRun | None]:
        """Every (candidate, grid) of `batch` at once (a batch is not stopped part-way: --budget is checked
        between batches); `each(i, ran)` in the batch's order once all are back."""
        items = [(self.path, c.to_json(), list(grid), original.to_json(), list(original_grid)) for c, grid in batch]
        results = self.ex.map("kinspect.tune.run:trial_job", items, gpu=True)
        for (c, _), r in zip(batch, results):
            if c.key() == original.key() and r.gpu is not None:
                self.home = r.gpu.key
        out = []
        for i, r in enumerate(results):
            ran = self._ran(r)
            elsewhere = r.gpu is not None and r.gpu.key != self.home
            out.append(TrialRun(ran.ok, ran.line, ran.wall, ran.error,
                                    r.gpu.describe() if r.gpu is not None else "",
                                    ran.baseline if elsewhere else None))
            each(i, out[-1])
        return out

    @staticmethod
    def _ran(r) -> TrialRun:
        from kinspect.bench.stats import Summary

        if r.error:        # the worker could not run the job (it died, or the replay could not be made)
            return TrialRun(error=r.error)
        v = r.value
        return TrialRun(v["ok"], v["line"], None if v["wall"] is None else Summary(**v["wall"]), v["error"],
                   baseline=Summary(**v["baseline"]))


@dataclass(frozen=True)
class Reference:
    outputs: dict              # the tensors the original config's run changed, as it left them
    unreproducible: str = ""   # the difference a second run of the original gave, if any


def _same_bytes(a, b) -> bool:
    """The two tensors' storages hold the same bytes (the gaps between strided rows included)."""
    import torch

    def raw(t):
        return torch.empty(0, dtype=torch.uint8, device=t.device).set_(t.untyped_storage())

    return torch.equal(raw(a), raw(b))


def _precision(t) -> str:
    return str(t.dtype).replace("torch.", "")


def device_line(name: str, compare: str = "", store=None) -> str | None:
    """None when a GPU is here to tune on; else the one line that says there is none."""
    import shlex

    from kinspect.files.store import store_flag

    try:
        import torch

        if torch.cuda.is_available():
            return None
    except Exception:
        pass
    return (f"no GPU here to tune {name} on: tune times each candidate on the device (run it where the program "
            f"ran; `kinspect diff {shlex.quote(compare or name)}{store_flag(store)} --num-warps 4,8` compares candidates' code "
            f"without one)")


def record_launch(kernel: str, *, out_dir, constexprs: dict, args: dict, size: str | None) -> str:
    """Launch a kernel (shipped, or FILE:KERNEL with its example or --arg values) once on the GPU under
    kinspect's capture, so that it has a captured launch to tune; the variant's folder."""
    import torch

    from kinspect.bench.prepared import prepare
    from kinspect.hooks.session import recording
    from kinspect.core.errors import KinspectError

    launch = prepare(kernel, device="cuda", constexprs=constexprs, args=args, size=size, num_warps=None,
                     num_stages=None)
    with recording(out_dir, strict=True) as rec:
        launch()
        torch.cuda.synchronize()
    ran = [v for v in rec.variants if v.kernel == getattr(launch.fn, "__name__", launch.label)] or list(rec.variants)
    if not ran:
        raise KinspectError(f"launching '{kernel}' recorded no variant in {out_dir}")
    return ran[-1].path
