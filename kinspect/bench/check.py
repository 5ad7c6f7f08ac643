"""Is a kernel's output right? Compared with its torch reference, on the reference's scale.

The error is max |out - ref| / max |ref|: one figure that means the same for a softmax (values
below 1) and a matmul (values in the tens), against a tolerance chosen by the arithmetic the
kernel did (TF32 matrix instructions round float32 inputs to 10 mantissa bits).
"""

from __future__ import annotations

from dataclasses import dataclass

# relative-to-scale tolerances by the precision the kernel computed in
TOLERANCE = {"float64": 1e-9, "float32": 1e-4, "tf32": 1e-2, "float16": 1e-2, "bfloat16": 2e-2}


@dataclass(frozen=True)
class Check:
    max_abs: float
    scale: float          # max |reference|
    tolerance: float      # on max_abs / scale
    precision: str        # what the tolerance is for: float32, tf32, ...
    against: str          # what was compared: "torch reference", ...
    shape_ok: bool = True

    @property
    def error(self) -> float:
        return self.max_abs / self.scale if self.scale else self.max_abs

    @property
    def ok(self) -> bool:
        return self.shape_ok and self.error <= self.tolerance

    def describe(self) -> str:
        if not self.shape_ok:
            return f"WRONG: output shape differs from the {self.against}"
        verdict = "correct" if self.ok else "WRONG"
        return (f"{verdict}: max error {self.error:.2g} of the {self.against}'s scale (max |ref| {self.scale:.3g}); "
                f"tolerance {self.tolerance:g} for {self.precision}")

    def to_json(self) -> dict:
        return {"ok": self.ok, "error": self.error, "max_abs": self.max_abs, "scale": self.scale,
                "tolerance": self.tolerance, "precision": self.precision, "against": self.against,
                "shape_ok": self.shape_ok}

    @classmethod
    def from_json(cls, d: dict) -> "Check":
        return cls(**{k: d[k] for k in ("max_abs", "scale", "tolerance", "precision", "against", "shape_ok")})


def precision_of(dtype: str, matrix_instructions: bool = False) -> str:
    return "tf32" if dtype == "float32" and matrix_instructions else dtype


def compare(out, ref, *, precision: str, against: str = "torch reference") -> Check:
    import torch

    tol = TOLERANCE.get(precision, 1e-2)
    if tuple(out.shape) != tuple(ref.shape):
        return Check(float("inf"), 0.0, tol, precision, against, shape_ok=False)
    # on the output's device, in float32 at least (float64 stays; integers in float64, exact to 2**53): a
    # GPU's 400 MB logits are compared there, not copied to the host as doubles (seconds per tensor)
    dt = torch.promote_types(out.dtype, torch.float32) if out.dtype.is_floating_point or out.dtype.is_complex \
        else torch.float64
    o, r = out.detach().to(dt), ref.detach().to(device=out.device, dtype=dt)
    diff = (o - r).abs()
    # NaN where the reference has NaN too is agreement; anywhere else it is an infinite error
    both_nan = torch.isnan(o) & torch.isnan(r)
    diff = torch.where(both_nan, torch.zeros_like(diff), diff).nan_to_num(nan=float("inf"))
    finite = r[torch.isfinite(r)]
    scale = float(finite.abs().max()) if finite.numel() else 0.0
    return Check(max_abs=float(diff.max()) if diff.numel() else 0.0, scale=scale, tolerance=tol,
                 precision=precision, against=against)
