"""`kinspect capture -o DIR -- CMD ...`: run a command with every Python process under capture.

The command's processes record each variant as Triton compiles it (stage files and record only)
and its launches (hooks.launches). Once the command has ended, this process makes what capture left
out of the user's compile: the derived stages (SASS, CPU assembly), in parallel, and merges every
process's launch files into the records.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from kinspect.errors import KinspectError, UsageError
from kinspect.model import Variant
from kinspect.sources import users_environment
from kinspect.store import LAUNCHES_GLOB, Store, merge_launches, read_record, read_records

BOOT = Path(__file__).parent / "boot"
SUMMARIES = ".kinspect-capture"     # per-process launch summaries, read back and removed here
# Inductor's static CUDA launcher (on by default since torch 2.8) launches without Triton's launcher,
# so no launch hook sees its kernels; capture turns it off unless the user chose.
STATIC_LAUNCHER = "TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER"


@dataclass(frozen=True)
class CaptureResult:
    code: int
    variants: list[Variant]                 # recorded or launched in this run, finished
    launches: int = 0                       # launches recorded, all processes
    hook_ms: float = 0.0                    # time the launch hooks took, all processes
    timing: dict | None = None              # {"method", "ms", "failed"} when timed
    unattributed: dict = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    derive_s: float = 0.0
    autotune: tuple = ()                    # kinspect.model.AutotuneDecision made in this run
    interpret: str | None = None            # the target launches under the interpreter were compiled for
    compile_s: float = 0.0                  # compiling them, after the program

    def to_json(self) -> dict:
        """What the capture recorded, for `kinspect capture --json`."""
        def variant(v: Variant) -> dict:
            la, gpu = v.launches, v.launches.gpu if v.launches else None
            return {"kernel": v.kernel, "variant": v.name, "path": v.path, "target": str(v.target),
                    "constexprs": v.constexprs, "options": v.options, "calls": la.calls if la else 0,
                    "gpu_ms": gpu.total_ms if gpu else None, "tuning_calls": la.tuning_calls if la else 0,
                    "tuning_ms": la.tuning_ms if la else 0.0, "notes": list(v.notes)}

        return {"exit_code": self.code, "variants": [variant(v) for v in self.variants], "launches": self.launches,
                "hook_ms": self.hook_ms, "timing": self.timing, "unattributed": self.unattributed,
                "autotune": [d.to_json() for d in self.autotune], "interpret": self.interpret,
                "compile_s": self.compile_s, "derive_s": self.derive_s, "notes": list(self.notes)}


def run(command: list[str], out_dir: str | Path, *, time_method: str | None = None,
        progress: Callable[[int, int], None] | None = None, interpret: str | None = None,
        compiling: Callable | None = None) -> CaptureResult:
    """Run `command` with capture active in it and its Python subprocesses; then derive the stages
    capture left out and merge the launch records. `time_method` ("profiler" or "events") times every
    launch on the GPU. With `interpret` (a target such as "cuda:90") the command runs under
    TRITON_INTERPRET and each kernel and specialization it launched is compiled for that target
    afterwards (kinspect.hooks.interpret); `compiling(outcome, total)` follows those compiles."""
    if not command:
        raise UsageError("nothing to run; e.g. kinspect capture -o out -- python script.py")
    if time_method is not None:
        from kinspect.hooks.launches import TIMERS

        if time_method not in TIMERS:
            raise UsageError(f"--time {time_method}: use one of {', '.join(TIMERS)}")
    notes = []
    if interpret is None and os.environ.get("TRITON_INTERPRET", "").lower() in ("1", "true", "on", "yes"):
        interpret = ""      # the program would run interpreted anyway: record it the way that works there
        notes.append("TRITON_INTERPRET is set, so the program ran under Triton's interpreter and its kernels were "
                     "compiled afterwards, as with --interpret (-t chooses the target)")
    if interpret is not None:
        interpret = _interpret_target(interpret, time_method)
    out = Path(out_dir).resolve()
    started = time.time()
    # Fails early, with one line, on an unwritable folder or one another kinspect is writing; the
    # command's Python processes record under this lock (the environment says they may).
    with Store(out).lock():
        env = users_environment(os.environ)  # the command compiles into the user's Triton cache, as without kinspect
        env["KINSPECT_CAPTURE_DIR"] = str(out)
        env.pop("KINSPECT_CAPTURE_TIME", None)
        if time_method:
            env["KINSPECT_CAPTURE_TIME"] = time_method
        if STATIC_LAUNCHER not in env:
            env[STATIC_LAUNCHER] = "0"
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(BOOT), env.get("PYTHONPATH", "")) if p)
        env.pop("KINSPECT_CAPTURE_INTERPRET", None)
        if interpret is not None:
            env["TRITON_INTERPRET"] = "1"
            env["KINSPECT_CAPTURE_INTERPRET"] = interpret
        try:
            code = subprocess.call(command, env=env)
        except FileNotFoundError:
            raise KinspectError(f"command '{command[0]}' not found") from None
        except KeyboardInterrupt:
            code = 130
        if not out.is_dir():   # an empty store folder is removed again when the command compiled nothing
            return CaptureResult(code, [])
        compile_s = 0.0
        if interpret is not None:
            from kinspect.replay.sweep import compile_pending

            compiled = compile_pending(out, progress=compiling)
            compile_s = compiled.seconds
            notes += [f"'{k}' was not compiled for {interpret}: {err}" for k, err in compiled.failed]
        t0 = time.perf_counter()
        touched = _touched(out, started)
        variants = finish_all(touched, progress)
        for v in variants:
            merge_launches(Path(v.path))
        variants = [read_record(Path(v.path)) for v in variants]
        derive_s = time.perf_counter() - t0
        launches, hook_ms, timing, unattributed = _summaries(out / SUMMARIES)
        if timing and timing.get("other_kernels"):
            from kinspect import gpu_time

            gpu_time.write_others(out, timing["other_kernels"], timing["method"])
        from kinspect.store import merge_autotune

        autotune = tuple(merge_autotune(out))
    if env.get(STATIC_LAUNCHER) == "0" and STATIC_LAUNCHER not in os.environ and any(
            v.kernel.startswith("triton_") for v in variants):
        notes.append(f"Inductor's static CUDA launcher was off ({STATIC_LAUNCHER}=0) so that its launches reach "
                     f"Triton's launch hooks")
    return CaptureResult(code, variants, launches, hook_ms, timing, unattributed, tuple(notes), derive_s,
                         autotune=autotune, interpret=interpret, compile_s=compile_s)


def _interpret_target(target: str, time_method: str | None) -> str:
    """The offline target an interpreted capture compiles for (a GPU target: the point is the GPU
    code of a program run without one)."""
    from kinspect.compile.targets import DEFAULT_OFFLINE, resolve

    if time_method is not None:
        raise UsageError("--time measures GPU time; --interpret runs the kernels on the CPU, so there is none to "
                         "measure: drop one of them")
    text = target or DEFAULT_OFFLINE
    if text in ("device", "auto"):
        raise UsageError(f"--interpret compiles for a target named with -t, such as {DEFAULT_OFFLINE}; "
                         f"'-t {text}' names the device the interpreter does not use")
    return str(resolve(text).target)


def _touched(out: Path, started: float) -> list[Variant]:
    """Variants recorded in this run, and older ones this run launched (they have launch files)."""
    found = []
    for v in read_records(out):
        folder = Path(v.path)
        if _mtime(folder / "record.json") >= started - 1 or any(folder.glob(LAUNCHES_GLOB)):
            found.append(v)
    return found


def finish_all(variants: list[Variant], progress: Callable[[int, int], None] | None = None) -> list[Variant]:
    """Derive the stages each variant lacks (SASS from the cubin, CPU assembly), several at once:
    the tools are subprocesses, so threads overlap them. `progress(done, total)` after each."""
    from concurrent.futures import ThreadPoolExecutor

    from kinspect.hooks.record import finish, pending_derivers

    todo = [i for i, v in enumerate(variants) if pending_derivers(v)]
    out = list(variants)
    if not todo:
        return out
    if progress:
        progress(0, len(todo))
    with ThreadPoolExecutor(max_workers=max(1, min(os.cpu_count() or 1, len(todo)))) as pool:
        for n, (i, v) in enumerate(zip(todo, pool.map(lambda i: _finished(variants[i], finish), todo)), 1):
            out[i] = v
            if progress:
                progress(n, len(todo))
    return out


def _finished(v: Variant, finish) -> Variant:
    try:
        return finish(v)
    except Exception as e:   # one broken binary must not cost the others: the record says why
        import dataclasses

        return dataclasses.replace(v, notes=v.notes + (f"derived stages not made: {type(e).__name__}: {e}",))


def _summaries(folder: Path) -> tuple[int, float, dict | None, dict]:
    """What every process's launch hooks reported at exit, summed; the files are removed."""
    launches, hook_ms, timing, unattributed = 0, 0.0, None, {}
    if not folder.is_dir():
        return launches, hook_ms, timing, unattributed
    for p in sorted(folder.glob("*.json")):
        try:
            d = json.loads(p.read_text())
        except (OSError, ValueError):
            continue
        launches += int(d.get("launches", 0))
        hook_ms += float(d.get("hook_ms", 0.0))
        for k, n in (d.get("unattributed") or {}).items():
            unattributed[k] = unattributed.get(k, 0) + int(n)
        t = d.get("timing")
        if t:
            others = dict((timing or {}).get("other_kernels") or {})
            for name, o in (t.get("other_kernels") or {}).items():
                was = others.get(name, {"calls": 0, "ms": 0.0})
                others[name] = {"calls": was["calls"] + int(o["calls"]), "ms": was["ms"] + float(o["ms"])}
            timing = {"method": t["method"], "ms": (timing or {}).get("ms", 0.0) + float(t.get("ms", 0.0)),
                      "failed": t.get("failed") or (timing or {}).get("failed", ""), "other_kernels": others}
    import shutil

    shutil.rmtree(folder, ignore_errors=True)
    return launches, hook_ms, timing, unattributed


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
