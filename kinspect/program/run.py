"""`kinspect capture --store DIR -- CMD ...`: run a command with every Python process under capture.

The command's processes record each variant as Triton compiles it (stage files and record only)
and its launches (hooks.launch_counts). Once the command has ended, this process makes what capture left
out of the user's compile (`finish`): under --interpret it compiles what the command launched, then
the derived stages (SASS, CPU assembly), in parallel, and merges every process's launch files into
the records.

Ctrl-C: while the command runs it is the command's (a terminal sends it to the command too; kinspect
waits for the command to end, as a shell does, and goes on to keep what it recorded). During the
steps after it, Ctrl-C stops them: the compile workers are stopped, every variant finished so far
stays whole, and what is left stays in the store for `kinspect capture --resume STORE` (or the next
capture into it) to finish; the exit code is then 130.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from kinspect.core.errors import KinspectError, UsageError, warn
from kinspect.core.model import Variant
from kinspect.files.readonly import check_store_folder
from kinspect.files.sources import users_environment
from kinspect.files.store import CAPTURE_SUMMARIES, LAUNCHES_GLOB, Store, merge_launches, read_record, read_records

BOOT = Path(__file__).parent / "boot"


@dataclass(frozen=True)
class CaptureResult:
    code: int
    variants: list[Variant]                 # recorded or launched in this run, finished
    launches: int = 0                       # launches recorded, all processes
    hook_ms: float = 0.0                    # time observing launches took, all processes (an estimate: see per_launch_us)
    timing: dict | None = None              # {"method", "ms", "failed", "coverage"} when timed
    unattributed: dict = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    derive_s: float = 0.0
    autotune: tuple = ()                    # kinspect.core.model.AutotuneDecision made in this run
    interpret: str | None = None            # the target launches under the interpreter were compiled for
    compile_s: float = 0.0                  # compiling them, after the program
    interrupted: bool = False               # Ctrl-C stopped the steps after the program: see notes
    observed: dict = field(default_factory=dict)    # how launches were observed -> variants (hooks.observe)
    per_launch_us: float = 0.0              # what observing costs a launch, measured in the program's processes
    static_launcher: str = ""               # Inductor's static launcher as the program had it (left so)

    def to_json(self) -> dict:
        """What the capture recorded, for `kinspect capture --json`."""
        def variant(v: Variant) -> dict:
            la, gpu = v.launches, v.launches.gpu if v.launches else None
            return {"kernel": v.kernel, "variant": v.name, "path": v.path, "target": str(v.target),
                    "constexprs": v.constexprs, "options": v.options, "calls": la.calls if la else 0,
                    "gpu_ms": gpu.total_ms if gpu else None, "tuning_calls": la.tuning_calls if la else 0,
                    "tuning_ms": la.tuning_ms if la else 0.0, "notes": list(v.notes),
                    "launches": dataclasses.asdict(la) if la else None}

        return {"exit_code": self.code, "variants": [variant(v) for v in self.variants], "launches": self.launches,
                "hook_ms": self.hook_ms, "per_launch_us": self.per_launch_us, "observed": self.observed,
                "static_launcher": self.static_launcher, "timing": self.timing, "unattributed": self.unattributed,
                "autotune": [d.to_json() for d in self.autotune], "interpret": self.interpret,
                "compile_s": self.compile_s, "derive_s": self.derive_s, "notes": list(self.notes)}


def run(command: list[str], out_dir: str | Path, *, time_method: str | None = None, time_sample: int = 0,
        progress: Callable[[int, int], None] | None = None, interpret: str | None = None,
        compiling: Callable | None = None, program_stdout: int | None = None) -> CaptureResult:
    """Run `command` with capture active in it and its Python subprocesses; then derive the stages
    capture left out and merge the launch records. `time_method` ("profiler" or "events") times every
    launch on the GPU (`time_sample` = N: about one launch in N, profiler only). With `interpret` (a
    target such as "cuda:90") the command runs under TRITON_INTERPRET and each kernel and specialization it launched is compiled for that target
    afterwards (kinspect.program.interpreted_launches); `compiling(outcome, total)` follows those compiles.
    `program_stdout` (a file descriptor) takes the command's standard output instead of kinspect's."""
    if not command:
        raise UsageError("nothing to run; e.g. kinspect capture --store out -- python script.py")
    if time_method is not None:
        from kinspect.hooks.timers import TIMERS

        if time_method not in TIMERS:
            raise UsageError(f"--time {time_method}: use one of {', '.join(TIMERS)}")
    if time_sample and (time_sample < 2 or (time_method or "profiler") != "profiler"):
        raise UsageError(f"--time-sample {time_sample}: give N >= 2 (about one launch in N is timed), with --time "
                         f"profiler")
    if time_sample and not time_method:
        time_method = "profiler"
    notes = []
    if interpret is None and os.environ.get("TRITON_INTERPRET", "").lower() in ("1", "true", "on", "yes"):
        interpret = ""      # the program would run interpreted anyway: record it the way that works there
        notes.append("TRITON_INTERPRET is set, so the program ran under Triton's interpreter and its kernels were "
                     "compiled afterwards, as with --interpret (-t chooses the target)")
    if interpret is not None:
        from kinspect.core.optional import need

        need("numpy", "capture --interpret (Triton's interpreter runs kernels with numpy)")   # not a traceback later
        interpret = _interpret_target(interpret, time_method)
    check_store_folder(out_dir)
    out = Path(out_dir).resolve()
    started = time.time()
    # Fails early, with one line, on an unwritable folder or one another kinspect is writing; the
    # command's Python processes record under this lock (the environment says they may).
    with Store(out).lock():
        env = users_environment(os.environ)  # the command compiles into the user's Triton cache, as without kinspect
        env["KINSPECT_CAPTURE_DIR"] = str(out)
        env.pop("KINSPECT_CAPTURE_TIME", None)
        env.pop("KINSPECT_CAPTURE_TIME_SAMPLE", None)
        if time_method:
            env["KINSPECT_CAPTURE_TIME"] = time_method
        if time_sample:
            env["KINSPECT_CAPTURE_TIME_SAMPLE"] = str(int(time_sample))
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(BOOT), env.get("PYTHONPATH", "")) if p)
        env.pop("KINSPECT_CAPTURE_INTERPRET", None)
        if interpret is not None:
            env["TRITON_INTERPRET"] = "1"
            env["KINSPECT_CAPTURE_INTERPRET"] = interpret
        code = _run_program(command, env, program_stdout)
        if not out.is_dir():   # an empty store folder is removed again when the command compiled nothing
            return CaptureResult(code, [])
        result = finish_capture(out, started=started, progress=progress, compiling=compiling, code=code, notes=notes,
                        interpret=interpret)
    return result


def _run_program(command: list[str], env: dict, stdout: int | None = None) -> int:
    """Run the command and wait for it; its exit code as a shell gives it (128 + N when signal N
    killed it). A SIGINT reaching kinspect meanwhile is the command's to act on: kinspect waits."""
    from kinspect.core.interrupt import deferred, exit_code

    try:
        proc = subprocess.Popen(command, env=env, stdout=stdout)
    except FileNotFoundError:
        raise KinspectError(f"command '{command[0]}' not found") from None
    except PermissionError:
        raise KinspectError(f"command '{command[0]}' cannot be run (permission denied)") from None
    with deferred(reraise=False):
        proc.wait()
    return exit_code(proc.returncode)


def resume(out_dir: str | Path, *, progress: Callable[[int, int], None] | None = None,
           compiling: Callable | None = None) -> CaptureResult:
    """Finish what a capture into `out_dir` left undone (it was interrupted after its program): compile
    what its program launched under the interpreter, derive the stages, merge the launch files."""
    from kinspect.files.store import INTERPRET_PENDING, is_store

    out = Path(out_dir).resolve()
    if not out.is_dir() or not (is_store(out) or (out / INTERPRET_PENDING).is_dir()):
        raise UsageError(f"--resume {out_dir}: not a kinspect store; give the folder a capture wrote (its -o)")
    with Store(out).lock():
        return finish_capture(out, started=None, progress=progress, compiling=compiling, code=0, notes=[], interpret=None)


def finish_capture(out: Path, *, started: float | None, progress, compiling, code: int, notes: list,
           interpret: str | None) -> CaptureResult:
    """The steps after the program, on the store `out`: compile what ran under the interpreter (its
    pending files), derive the stages capture left out of the user's compile, merge the launch and
    autotune files, and read the processes' summaries. `started`: the time the program started (the
    variants recorded since are this run's), or None to finish every variant that needs it. Ctrl-C
    stops it: what is done stays whole, the result says what is left (code 130)."""
    from kinspect.core.interrupt import Interrupted, deferred
    from kinspect.program.pending import compile_pending
    from kinspect.files.store import merge_autotune

    compile_s, compiled, done = 0.0, [], []
    try:
        try:
            c = compile_pending(out, progress=compiling)
        except Interrupted as e:
            c = e.done
            compiled = c.variants if c else []
            raise
        compiled, compile_s = c.variants, c.seconds
        interpret = interpret or ", ".join(c.targets) or None
        notes += list(c.notes) + [f"'{k}' was not compiled for {interpret}: {err}" for k, err in c.failed]
        t0 = time.perf_counter()
        problems: list[str] = []
        touched = {v.path: v for v in [*_touched(out, started, problems), *compiled]}
        notes += problems
        variants = finish_all(list(touched.values()), progress, done)
        with deferred():
            for v in variants:
                try:
                    merge_launches(Path(v.path))
                except KinspectError as e:      # that variant's launch files stay; readers merge them too
                    notes.append(f"variant {v.name}: launch records not merged: {e}")
        variants = [read_record(Path(v.path)) for v in variants]
        derive_s = time.perf_counter() - t0
        with deferred():
            launches, hook_ms, timing, unattributed, how = _summaries(out / CAPTURE_SUMMARIES)
            if timing and timing.get("other_kernels"):
                from kinspect.files import gpu_time

                gpu_time.write_others(out, timing["other_kernels"], timing["method"], timing.get("window", ""),
                                      tuning=timing.get("tuning_other_kernels") or {})
            autotune = tuple(merge_autotune(out))
    except KeyboardInterrupt:
        import shlex

        kept = {v.path: v for v in [*compiled, *done]}
        notes.append(f"what is left stays in the store: finish it with kinspect capture --resume "
                     f"{shlex.quote(str(out))}")
        return CaptureResult(130, list(kept.values()), notes=tuple(notes), interpret=interpret, compile_s=compile_s,
                             interrupted=True)
    return CaptureResult(code, variants, launches, hook_ms, timing, unattributed, tuple(notes), derive_s,
                         autotune=autotune, interpret=interpret, compile_s=compile_s, **how)


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


def _touched(out: Path, started: float | None, problems: list) -> list[Variant]:
    """Variants recorded in this run, and older ones this run launched (they have launch files); with
    no `started`, every variant with launch files or stages to derive. A record that cannot be read
    is left out with a line in `problems`."""
    from kinspect.hooks.record import pending_derivers

    found = []
    for v in read_records(out, problems):
        folder = Path(v.path)
        if started is None:
            if any(folder.glob(LAUNCHES_GLOB)) or pending_derivers(v):
                found.append(v)
        elif _mtime(folder / "record.json") >= started - 1 or any(folder.glob(LAUNCHES_GLOB)):
            found.append(v)
    return found


def finish_all(variants: list[Variant], progress: Callable[[int, int], None] | None = None,
               done: list | None = None) -> list[Variant]:
    """Derive the stages each variant lacks (SASS from the cubin, CPU assembly), several at once:
    the tools are subprocesses, so threads overlap them. `progress(done, total)` after each. Each
    finished variant is appended to `done` as it finishes; Ctrl-C lets the running ones finish and
    starts no more."""
    from concurrent.futures import ThreadPoolExecutor, as_completed

    from kinspect.hooks.record import finish, pending_derivers

    todo = [i for i, v in enumerate(variants) if pending_derivers(v)]
    out = list(variants)
    if not todo:
        return out
    if progress:
        progress(0, len(todo))
    pool = ThreadPoolExecutor(max_workers=max(1, min(os.cpu_count() or 1, len(todo))))
    try:
        futures = {pool.submit(_finished, variants[i], finish): i for i in todo}
        for n, f in enumerate(as_completed(futures), 1):
            out[futures[f]] = f.result()
            if done is not None:
                done.append(out[futures[f]])
            if progress:
                progress(n, len(todo))
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return out


def _finished(v: Variant, finish) -> Variant:
    try:
        return finish(v)
    except Exception as e:   # one broken binary must not cost the others: the record says why
        return dataclasses.replace(v, notes=v.notes + (f"derived stages not made: {type(e).__name__}: {e}",))


def _summaries(folder: Path) -> tuple[int, float, dict | None, dict, dict]:
    """What every process's launch observers reported at exit, summed, and how they observed
    (CaptureResult's observed, per_launch_us, static_launcher); the files are removed."""
    from kinspect.files import run_info, schema
    from kinspect.files.store import load_json

    launches, hook_ms, timing, unattributed = 0, 0.0, None, {}
    how = {"observed": {}, "per_launch_us": 0.0, "static_launcher": ""}
    envs = []
    weighted = 0.0
    if not folder.is_dir():
        return launches, hook_ms, timing, unattributed, how
    for p in sorted(folder.glob("*.json")):
        try:
            d = load_json(folder, p.name, schema.SUMMARY)
        except KinspectError as e:
            warn(f"a process's launch summary could not be read ({e}); its launches, hook time and GPU time "
                 f"are left out of the totals")
            continue
        launches += int(d.get("launches", 0))
        if d.get("environment"):
            envs.append(d["environment"])
        hook_ms += float(d.get("hook_ms", 0.0))
        weighted += float(d.get("per_launch_us", 0.0)) * int(d.get("launches", 0))
        for k, n in (d.get("observed") or {}).items():
            how["observed"][k] = how["observed"].get(k, 0) + int(n)
        if d.get("static_launcher") and d["static_launcher"] not in how["static_launcher"]:
            how["static_launcher"] = "; ".join(x for x in (how["static_launcher"], d["static_launcher"]) if x)
        for k, n in (d.get("unattributed") or {}).items():
            unattributed[k] = unattributed.get(k, 0) + int(n)
        t = d.get("timing")
        if t:
            others, tuning = ({**((timing or {}).get(k) or {})} for k in ("other_kernels", "tuning_other_kernels"))
            for into, key in ((others, "other_kernels"), (tuning, "tuning_other_kernels")):
                for name, o in (t.get(key) or {}).items():
                    was = into.get(name, {"calls": 0, "ms": 0.0})
                    into[name] = {"calls": was["calls"] + int(o["calls"]), "ms": was["ms"] + float(o["ms"])}
            timing = {"method": t["method"], "ms": (timing or {}).get("ms", 0.0) + float(t.get("ms", 0.0)),
                      "failed": t.get("failed") or (timing or {}).get("failed", ""),
                      "coverage": t.get("coverage") or (timing or {}).get("coverage", ""), "other_kernels": others,
                      "tuning_other_kernels": tuning, "window": t.get("window") or (timing or {}).get("window", "")}
    import shutil

    info = run_info.merged(envs)
    if info is not None:    # what a program diff's header says of this run (kinspect.files.run_info)
        run_info.write(folder.parent, info)
    shutil.rmtree(folder, ignore_errors=True)
    how["per_launch_us"] = weighted / launches if launches else 0.0
    return launches, hook_ms, timing, unattributed, how


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
