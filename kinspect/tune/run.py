"""The GPU side of a tune: the captured launch replayed with a candidate's blocks, warps and stages,
its output checked against the original config's on the same inputs, and timed.

`Replayer` is the one object `kinspect.tune.search` measures through; tests hand the search another
object with the same two methods (`check`, `time`), never a result made up in the product.
"""

from __future__ import annotations

from kinspect.tune.space import Candidate


class Replayer:
    """One captured launch (kinspect.replay.spec.ReplaySpec) on `device`: fresh arguments of the
    captured shapes, dtypes and strides, built once; every run starts from a copy of them."""

    def __init__(self, spec, device: str = "cuda"):
        from kinspect.compile import jit_function
        from kinspect.replay.args import values
        from kinspect.compile.replayed import kernel
        from kinspect.compile.targets import resolve

        self.spec = spec
        self.fn = jit_function(kernel(spec))
        vals = values(spec.args, spec.signature, spec.attributes, device)
        self.inputs = vals.args
        self.constexprs = vals.constexprs
        # the captured launch options (fp fusion, maxnreg, ...) but those a candidate sets
        allowed = resolve(spec.target).backend.launch_options
        self.options = {k: v for k, v in spec.options.items() if k in allowed and k not in ("num_warps", "num_stages")}
        self.reference: dict | None = None

    def _launch(self, c: Candidate, grid, args: dict):
        consts = {**self.constexprs, **dict(c.constexprs)}
        return self.fn[tuple(grid)](**args, **consts, **self.options, num_warps=c.num_warps, num_stages=c.num_stages)

    def _outputs(self, c: Candidate, grid) -> dict:
        import torch

        args = self._copy()
        self._launch(c, grid, args)
        torch.cuda.synchronize()
        return {k: v for k, v in args.items() if isinstance(v, torch.Tensor)}

    def check(self, c: Candidate, grid, original: Candidate, original_grid) -> tuple[bool, str]:
        """Run `c`; compare every tensor argument afterwards with the original config's (bench's
        tolerances for the tensor's dtype). (ok, the worst comparison in words)."""
        from kinspect.bench.check import compare

        if self.reference is None:
            self.reference = self._outputs(original, original_grid)
        got = self._outputs(c, grid)
        worst = None
        for name, ref in self.reference.items():
            chk = compare(got[name], ref, precision=str(ref.dtype).replace("torch.", ""),
                          against="original config's output")
            if worst is None or not chk.ok or chk.error > worst[1].error:
                worst = (name, chk)
                if not chk.ok:
                    break
        if worst is None:
            return True, "no tensor arguments to compare"
        return worst[1].ok, f"{worst[0]}: {worst[1].describe()}"

    def time(self, c: Candidate, grid, *, rep_ms: int = 100):
        """kinspect.bench.timing.Timing of `c` on the captured inputs (do_bench, L2 flushed)."""
        from kinspect.bench.timing import time_gpu

        args = self._copy()      # a kernel that writes its inputs (in_out_ptr) leaves the check's inputs alone
        return time_gpu(lambda: self._launch(c, grid, args), rep_ms=rep_ms)

    def _copy(self) -> dict:
        import torch

        return {k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in self.inputs.items()}


def device_line(name: str, compare: str = "") -> str | None:
    """None when a GPU is here to tune on; else the one line that says there is none."""
    try:
        import torch

        if torch.cuda.is_available():
            return None
    except Exception:
        pass
    return (f"no GPU here to tune {name} on: tune times each candidate on the device (run it where the program "
            f"ran; `kinspect diff {compare or name} -p NAME=V1,V2` compares candidates' code without one)")


def record_launch(kernel: str, *, out_dir, constexprs: dict, args: dict, size: str | None) -> str:
    """Launch a kernel (shipped, or FILE:KERNEL with its example or --arg values) once on the GPU under
    kinspect's capture, so that it has a captured launch to tune; the variant's folder."""
    import torch

    from kinspect.bench.launch import prepare
    from kinspect.hooks import capture
    from kinspect.errors import KinspectError

    launch = prepare(kernel, device="cuda", constexprs=constexprs, args=args, size=size, num_warps=None,
                     num_stages=None)
    with capture(out_dir, strict=True) as rec:
        launch()
        torch.cuda.synchronize()
    ran = [v for v in rec.variants if v.kernel == getattr(launch.fn, "__name__", launch.label)] or list(rec.variants)
    if not ran:
        raise KinspectError(f"launching '{kernel}' recorded no variant in {out_dir}")
    return ran[-1].path
