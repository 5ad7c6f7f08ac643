"""`--counters`: captured kernels replayed under Nsight Compute, their counters read back.

    measured = measure(folders)      # {folder: Counters}, written into each folder as counters.json

Each variant's most frequent captured launch is replayed once (kinspect.bench.captured: the kernel
rebuilt from its captured source, fresh tensors of the captured shapes, strides and dtypes) in one
child process that ncu profiles, with boost clocks as the program ran (`--clock-control none`) and
caches flushed before each launch (`--cache-control all`). Replayed integer tensors hold zeros, so a
kernel that gathers by index (an embedding) reads one row in the replay: its counters say so.

Run this module (`python -m kinspect.bench.ncu FOLDER...`) and it is that child: it launches each
folder's kernel once, in order, and prints one line per folder.
"""

from __future__ import annotations

import datetime
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from kinspect.files.counters import METRICS, STALLS, Counters, by_kernel, parse_csv, write
from kinspect.core.errors import KinspectError

TIMEOUT_S = 540
NO_PERMISSION = "ERR_NVGPUCTRPERM"
# The child's line per folder, in order: `kinspect-ncu 3 ok 4096,1,1 zeros triton_poi_fused_add_0` (zeros:
# it had integer tensors, replayed as zeros; `-` otherwise), or `kinspect-ncu 3 failed - - ValueError: ...`.
CHILD_LINE = re.compile(r"^kinspect-ncu (?P<i>\d+) (?P<status>ok|failed) (?P<grid>\S+) (?P<zeros>\S+) (?P<rest>.*)$")
ZEROS_NOTE = "integer tensors replayed as zeros: an index read from them (an embedding) reads one row"


def ncu_path() -> str | None:
    return shutil.which("ncu")


def missing_line() -> str:
    return ("--counters needs Nsight Compute: `ncu` is not on PATH (it ships with the CUDA toolkit; add its "
            "folder to PATH, e.g. /usr/local/cuda/bin)")


def command(ncu: str, names: list[str], report: Path, folders: list[str]) -> list[str]:
    """The ncu command line that profiles one replay of each folder's kernel."""
    pattern = "regex:^(" + "|".join(re.escape(n) for n in dict.fromkeys(names)) + ")$"
    return [ncu, "--target-processes", "all", "--kernel-name", pattern,
            "--metrics", ",".join(METRICS.values()) + "," + STALLS,
            "--clock-control", "none", "--cache-control", "all", "--replay-mode", "kernel",
            "--export", str(report), "--force-overwrite",
            sys.executable, "-m", "kinspect.bench.ncu", *folders]


def measure(folders: list[str], *, ncu: str | None = None, timeout: int = TIMEOUT_S) -> dict[str, Counters | str]:
    """Replay each variant folder's top launch once under ncu; {folder: its Counters (also written to
    the folder), or why it has none}. Raises KinspectError, with one line, when ncu is missing, cannot
    read the counters, or measured nothing."""
    from kinspect.files.store import read_record

    ncu = ncu or ncu_path()
    if ncu is None:
        raise KinspectError(missing_line())
    variants = [read_record(Path(f)) for f in folders]
    with tempfile.TemporaryDirectory(prefix="kinspect-ncu-") as tmp:
        report = Path(tmp) / "run"
        cmd = command(ncu, [v.kernel for v in variants], report, [str(Path(f).resolve()) for f in folders])
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise KinspectError(f"ncu did not finish within {timeout} s on {len(folders)} kernels; ask for fewer "
                                f"(--counters N)") from None
        log = proc.stdout + proc.stderr
        if NO_PERMISSION in log:
            raise KinspectError("ncu cannot read the GPU's performance counters here (ERR_NVGPUCTRPERM): run as root, "
                                "or let users profile (the driver option NVreg_RestrictProfilingToAdminUsers=0)")
        rep = report.with_suffix(".ncu-rep")
        if not rep.is_file():
            raise KinspectError(nothing_measured(proc.returncode, log, [v.kernel for v in variants]))
        csv_text = subprocess.run([ncu, "--import", str(rep), "--csv", "--page", "raw", "--print-units", "base"],
                                  capture_output=True, text=True, timeout=timeout).stdout
    rows = parse_csv(csv_text)
    launched = {int(m["i"]): m for m in map(CHILD_LINE.match, log.splitlines()) if m}
    version = ncu_version(ncu)
    today = datetime.date.today().isoformat()
    how = " ".join(cmd[:cmd.index(sys.executable)]) + " python -m kinspect.bench.ncu FOLDER..."
    groups = by_kernel(rows)
    taken: dict = {}
    out: dict[str, Counters | str] = {}
    for i, (folder, v) in enumerate(zip(folders, variants)):
        status = launched.get(i)
        if status is None or status["status"] != "ok":
            out[folder] = f"not replayed: {status['rest'] if status else _last_line(log)}"
            continue
        key = (v.kernel, tuple(int(x) for x in status["grid"].split(",")))
        pool = groups.get(key) or []
        n = taken.get(key, 0)
        if n >= len(pool):
            out[folder] = "ncu has no row for its launch"
            continue
        taken[key] = n + 1
        notes = (ZEROS_NOTE,) if status["zeros"] == "zeros" else ()
        c = Counters.from_rows([pool[n]], how=how, ncu_version=version, measured=today, notes=notes)
        write(folder, c)
        out[folder] = c
    return out


def measure_on(folders: list[str], ex=None) -> dict[str, Counters | str]:
    """measure(), the folders split over the GPUs of a local executor (kinspect.core.executor): one ncu run
    per GPU, all at once, each in the worker pinned to its GPU (the replays it profiles run there). One
    GPU, one folder, or no executor: measure() here. A problem every GPU met (ncu missing, no permission)
    is a KinspectError, as from measure()."""
    gpus = list(getattr(ex, "gpus", None) or [])
    if ex is None or ex.name != "local" or len(gpus) < 2 or len(folders) < 2:
        return measure(folders)
    chunks = [c for c in (folders[i::len(gpus)] for i in range(len(gpus))) if c]
    results = ex.map("kinspect.bench.ncu:measure_job", [(c,) for c in chunks], gpu=True,
                     pin={i: gpus[i] for i in range(len(chunks))})
    out: dict[str, Counters | str] = {}
    errors = []
    for chunk, r in zip(chunks, results):
        if r.error:
            errors.append(r.error.removeprefix("KinspectError: "))
            out.update({f: f"not measured on {r.gpu.describe() if r.gpu else 'its GPU'}: {errors[-1]}" for f in chunk})
        else:
            out.update({f: Counters.from_json(v) if isinstance(v, dict) else str(v) for f, v in r.value.items()})
    if len(errors) == len(chunks):
        raise KinspectError(errors[0])
    return out


def measure_job(folders: list[str]) -> dict:
    """measure() in a GPU worker (a kinspect.core.executor job): plain values back."""
    return {f: c.to_json() if isinstance(c, Counters) else c for f, c in measure(folders).items()}


def ncu_version(ncu: str) -> str:
    try:
        text = subprocess.run([ncu, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""
    m = re.search(r"Version\s+(\S+)", text)
    return m.group(1) if m else text.strip().splitlines()[-1] if text.strip() else ""


def nothing_measured(code: int, log: str, names: list[str]) -> str:
    """Why ncu wrote no report, from what the replay printed: the kernels it could not launch (their
    errors), else that it launched them and ncu's name filter matched none, else the replay's last line."""
    lines = {int(m["i"]): m for m in map(CHILD_LINE.match, log.splitlines()) if m}
    head = f"ncu measured nothing (exit {code}): "
    if not lines:
        return head + f"the replay printed no result: {_last_line(log)}"
    failed = [(i, m) for i, m in sorted(lines.items()) if m["status"] == "failed"]
    if failed:
        said = "; ".join(f"{names[i] if i < len(names) else i}: {m['rest']}" for i, m in failed[:3])
        more = f" (and {len(failed) - 3} more)" if len(failed) > 3 else ""
        return head + f"the replay could not launch {len(failed)} of {len(names)} kernel(s): {said}{more}"
    warning = next((x.split("==", 2)[-1].strip() for x in log.splitlines() if x.startswith("==WARNING==")), "")
    return head + (f"the replay launched its {len(lines)} kernel(s) ({', '.join(m['rest'] for m in lines.values())}) "
                   f"but ncu profiled none of them by name" + (f" (ncu: {warning})" if warning else ""))


def _last_line(log: str) -> str:
    lines = [x for x in log.splitlines() if x.strip() and not x.startswith("==PROF==")]
    return lines[-1].strip()[:300] if lines else "no output"


# -- the child ncu profiles ----------------------------------------------------------------------------

def replay(folders: list[str]) -> None:
    """Launch each folder's captured top launch once, in order; one line each on stdout."""
    import torch

    from kinspect.bench.first_call import isolated
    from kinspect.bench.captured import prepare

    device = torch.device("cuda")
    for i, folder in enumerate(folders):
        try:
            launch = prepare(folder, device=device)
            with isolated(launch.fn):
                launch()
                torch.cuda.synchronize()
            grid = ",".join(str(int(x)) for x in (tuple(launch.grid_size()) + (1, 1))[:3])
            zeros = "zeros" if any(n.startswith("integer tensors") for n in launch.notes) else "-"
            print(f"kinspect-ncu {i} ok {grid} {zeros} {launch.label}", flush=True)
        except Exception as e:       # one kernel that does not replay must not cost the others
            print(f"kinspect-ncu {i} failed - - {type(e).__name__}: {str(e)[:200]}", flush=True)


if __name__ == "__main__":
    replay(sys.argv[1:])
