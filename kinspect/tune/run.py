"""The GPU side of a tune: the captured launch replayed with a candidate's blocks, warps and stages,
its output checked against the original config's on the same inputs, and timed.

`Replayer` is the one object `kinspect.tune.search` measures through; tests hand the search another
object with the same two methods (`check`, `time`), never a result made up in the product.
"""

from __future__ import annotations

from dataclasses import dataclass

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
