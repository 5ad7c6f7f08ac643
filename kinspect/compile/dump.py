"""Compile one variant of a kernel, shipped or the user's, and store every stage: what `kinspect dump`
does, and each job of a sweep."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from kinspect.core.errors import CompileError, UsageError
from kinspect.core.model import Variant
from kinspect.files.readonly import check_store_folder
from kinspect.files.store import DEFAULT_OUT


@dataclass(frozen=True)
class DumpResult:
    variant: Variant
    label: str          # the kernel as the user named it
    target_note: str    # how the target was chosen: "cuda:90 (offline: no device here)"
    store: Path


def dump(kernel: str, *, target: str | None = None, constexprs: dict | None = None, args: dict | None = None,
         num_warps: int | None = None, num_stages: int | None = None, size: str | None = None,
         out_dir: str | Path = DEFAULT_OUT, retarget=(), config: int | None = None, launch: int | None = None,
         from_: str | None = None, reuse: bool = False, run_tests: bool = True) -> DumpResult:
    """Compile one variant of a shipped kernel (`fused_mm_softmax`) or a user kernel
    (`path/file.py:name`, `pkg.mod:name`) for a target and store every stage; with `retarget` CPU
    specs, the variant's LLVM IR compiled for those CPUs is stored beside them as `asm@<cpu>`
    stages. An autotuned user kernel is compiled with its config number `config` (default: the
    first that prune_configs_by keeps); its example values from the file's launch number `launch`
    (in the code `from_` names, else module-level code, else its __main__ block) where nothing else
    gives them, else assumed from the kernel's code. With `reuse`, a variant the store holds from the
    same request is returned as stored (kinspect.compile.variant.compile_variant). `run_tests` False:
    the project's tests are read, never run (kinspect.compile.test_runs)."""
    from kinspect.compile.variant import compile_variant
    from kinspect.compile.targets import resolve
    from kinspect.compile.user import is_user_kernel, load

    check_store_folder(out_dir)
    constexprs = dict(constexprs or {})
    resolved = resolve(target)
    if retarget and resolved.backend.gpu:
        raise UsageError(f"--retarget compiles a CPU backend's LLVM IR for another CPU; {resolved.target} makes "
                         f"GPU IR. Use it on a triton-cpu/spine-triton variant (-t device with that backend "
                         f"active) or on a folder or .ll file with vec-report")
    given = {k: v for k, v in (("num_warps", num_warps), ("num_stages", num_stages)) if v is not None}

    def user_job(u) -> dict:
        """What compile_variant takes for a user kernel: its values, its options under the given
        ones, and what the variant records of it (Variant.user)."""
        return {"fn": u.fn, "args": u.args, "constexprs": u.constexprs, "grid": u.grid, "group": u.name,
                "options": {**u.options, **given}, "extra": {"user": u.record(kernel, args or {}, constexprs, config)},
                "env": u.env}

    if is_user_kernel(kernel):
        uk = load(kernel, args or {}, constexprs, config=config, resolved=resolved, launch=launch, from_=from_,
                  run_tests=run_tests)
        job = user_job(uk)
    else:
        if launch is not None or from_:
            raise UsageError(f"--launch and --from take example values from your file's own launches "
                             f"(file.py:kernel); '{kernel}' is a shipped kernel")
        if config is not None:
            raise UsageError(f"--config picks an autotune config of a kernel in your file (file.py:kernel); "
                             f"'{kernel}' is a shipped kernel: set its constexprs with -p")
        fn, call_args, consts, grid, own = _shipped(kernel, constexprs, args, size, resolved)
        job = {"fn": fn, "args": call_args, "constexprs": consts, "grid": grid, "group": kernel,
               "options": {**own, **given}, "extra": None}
    from kinspect.files.store import Store

    with Store(out_dir).lock():
        try:
            variant = compile_variant(**job, resolved=resolved, out_dir=out_dir, reuse=reuse)
        except CompileError as e:
            if job["extra"] is None:
                raise
            # made-up float inputs the kernel does not take (a loop-carried fp32 state of bf16 inputs):
            # the other float types, said in the launch line
            for alt in _other_floats(uk):
                try:
                    why = f"the made-up {uk.guessed_float} inputs failed to compile"
                    again = load(kernel, args or {}, constexprs, config=config, resolved=resolved, launch=launch,
                                 from_=from_, run_tests=run_tests, float_dtype=(alt, why, True))
                except (UsageError, CompileError):
                    continue
                if again.guessed_float != alt:
                    continue
                again = replace(again, launch=f"{again.launch}; with made-up {uk.guessed_float} inputs the kernel "
                                              f"failed to compile ({_first_line(str(e))}), so {alt} ones")
                try:
                    variant = compile_variant(**user_job(again), resolved=resolved, out_dir=out_dir, reuse=reuse)
                except CompileError:
                    continue
                break
            else:
                cause = uk.cause(str(e))
                text = f"{e}; {cause}" if cause else str(e)
                raise CompileError(f"{text}; {uk.where_values(kernel, target, str(e))}") from None
        if retarget:
            from kinspect.analysis.derived import add_retargets

            variant = add_retargets(variant, retarget)
    return DumpResult(variant=variant, label=job["group"], target_note=resolved.note, store=Path(out_dir))


def _other_floats(uk) -> list:
    """The float types to make the wrapper's made-up inputs in again, after its guess failed."""
    from kinspect.compile.wrappers import FLOATS

    return [f for f in FLOATS if f != uk.guessed_float] if uk.guessed_float else []


def _first_line(text: str) -> str:
    line = text.split("; kinspect assumed")[0].split("\n")[0]
    return line if len(line) <= 160 else line[:159] + "…"


def _shipped(name: str, constexprs: dict, args: dict | None, size: str | None, resolved):
    import torch

    from kinspect import kernels

    spec = kernels.checked(name, constexprs, args)
    device = "cpu"
    if not resolved.offline:
        from triton.runtime import driver

        device = driver.active.get_active_torch_device()
    example = kernels.example(spec, size or spec.default_size, getattr(torch, spec.dtype), device, constexprs)
    return spec.fn, example.args, example.constexprs, example.grid, example.options
