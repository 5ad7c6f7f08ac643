"""`kinspect dump --passes`: MLIR's per-pass timing and the IR before every pass, for one compile.

Triton's MLIR pass managers read MLIR_ENABLE_TIMING (a wall-time report per pipeline, printed to
stderr when the pipeline ends) and MLIR_ENABLE_DUMP with MLIR_DUMP_PATH (the IR before every pass,
appended to one file) when they are created, so the compile runs again in a child process with
them set, in a private cache and a throwaway store. Each snapshot that differs from the one before
(the IR the previous pass changed) is written into the variant's folder as
passes/NNN-before-<Pass>.mlir, with the timing in passes/passes.json.
LLVM's own passes (after llir) are not covered: Triton offers no timing for them.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from kinspect.core.errors import KinspectError
from kinspect.files.store import write_atomic

TIMEOUT_S = 600
# "                         ... Execution time report ..."
REPORT_RE = re.compile(r"^\s*\.\.\. Execution time report \.\.\.\s*$")
# "    0.0015 ( 36.4%)  InlinerPass"  /  "    0.0000 (  1.0%)    (A) CallGraph"
ROW_RE = re.compile(r"^\s*(?P<seconds>\d+\.\d+) \(\s*(?P<pct>[\d.]+)%\)  (?P<indent>\s*)(?P<name>\S.*?)\s*$")
# "// -----// IR Dump Before SymbolDCEPass: symbol-dce ('builtin.module' operation) //----- //"
DUMP_RE = re.compile(r"^// -----// IR Dump Before (?P<name>[^\s:(]+)[^\n]*//----- //\s*$")
# passes may dump their own intermediate IR, e.g. "// -----// SoftwarePipeliner internal IR Dump After: LowerLoops"
DUMP_MARK = "// -----//"


@dataclass(frozen=True)
class PassTime:
    name: str
    ms: float
    runs: int


@dataclass(frozen=True)
class Passes:
    pipelines: tuple[float, ...]                 # ms per MLIR pipeline, in the order they ran
    passes: tuple[PassTime, ...]                 # summed over runs, slowest first
    snapshots: int                               # IR dumps (one before each pass run)
    changed: tuple[str, ...] = ()                # files written: the IR before each pass that changed it
    folder: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)

    def to_json(self) -> dict:
        return {"pipelines_ms": list(self.pipelines), "passes": [vars(p) for p in self.passes],
                "snapshots": self.snapshots, "changed": list(self.changed), "folder": self.folder,
                "notes": list(self.notes)}


def parse_timing(lines) -> tuple[list[float], dict[str, PassTime]]:
    """MLIR timing reports -> (ms per pipeline, per-pass totals). Pipelines ("... Pipeline"),
    analyses ("(A) ...") and the Rest/Total rows are not passes."""
    pipelines, totals, runs = [], defaultdict(float), defaultdict(int)
    in_report = False
    for line in lines:
        if REPORT_RE.match(line):
            in_report = True
            continue
        m = ROW_RE.match(line) if in_report else None
        if not m:
            continue
        name, seconds = m["name"], float(m["seconds"])
        if name == "Total":
            pipelines.append(round(seconds * 1e3, 3))
            in_report = False
        elif name != "Rest" and not name.startswith("(A)") and not name.endswith("Pipeline"):
            totals[name] += seconds * 1e3
            runs[name] += 1
    return pipelines, {n: PassTime(n, round(ms, 3), runs[n]) for n, ms in totals.items()}


def split_snapshots(lines):
    """(pass name, IR text) for each 'IR Dump Before' block, streamed."""
    name, body = None, []
    for line in lines:
        if line.startswith(DUMP_MARK):  # a pass snapshot, or a pass's own internal dump (skipped)
            if name is not None:
                yield name, "".join(body)
            m = DUMP_RE.match(line)
            name, body = (m["name"] if m else None), []
        elif name is not None:
            body.append(line)
    if name is not None:
        yield name, "".join(body)


def collect(variant_path: str | Path, request: dict) -> Passes:
    """Compile `request` (compile.dump's keyword arguments, JSON-able) again with MLIR timing and dumps
    on; write the snapshots that changed the IR under `variant_path`/passes."""
    with tempfile.TemporaryDirectory(prefix="kinspect-passes-") as tmp:
        dump_path = Path(tmp, "mlir-dump.txt")
        env = {**os.environ, "MLIR_ENABLE_TIMING": "1", "MLIR_ENABLE_DUMP": "1", "MLIR_DUMP_PATH": str(dump_path)}
        request = {**request, "out_dir": str(Path(tmp, "store"))}
        try:
            proc = subprocess.run([sys.executable, "-m", "kinspect.compile.passes", json.dumps(request)],
                                  capture_output=True, text=True, env=env, timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise KinspectError(f"--passes: the instrumented compile ran over {TIMEOUT_S} s") from None
        if proc.returncode != 0:
            tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            raise KinspectError(f"--passes: the instrumented compile failed (exit {proc.returncode}): {tail}")
        pipelines, totals = parse_timing(proc.stderr.splitlines())
        folder = Path(variant_path, "passes")
        written, count = _write_changed(dump_path, folder) if dump_path.is_file() else ((), 0)
    notes = () if pipelines else ("this Triton printed no MLIR timing report (MLIR_ENABLE_TIMING unsupported?)",)
    result = Passes(pipelines=tuple(pipelines), passes=tuple(sorted(totals.values(), key=lambda p: -p.ms)),
                    snapshots=count, changed=tuple(written), folder=str(folder), notes=notes)
    if written or pipelines:
        folder.mkdir(parents=True, exist_ok=True)
        write_atomic(folder / "passes.json", json.dumps(result.to_json(), indent=1))
    return result


def _write_changed(dump_path: Path, folder: Path) -> tuple[list[str], int]:
    """Write each snapshot whose IR differs from the previous one (the first always): the IR that
    the previous pass produced. Returns (file names, snapshots seen)."""
    import shutil

    if folder.exists():
        shutil.rmtree(folder)  # a previous --passes run of this variant
    folder.mkdir(parents=True)
    written, previous, count = [], None, 0
    with open(dump_path, errors="replace") as f:
        for count, (name, text) in enumerate(split_snapshots(f), 1):
            if text != previous:
                fname = f"{count:03d}-before-{name}.mlir"
                (folder / fname).write_text(text)
                written.append(fname)
            previous = text
    return written, count


def main(argv: list[str]) -> int:
    import warnings

    from kinspect.compile.args import parse_args
    from kinspect.compile.dump import dump

    warnings.filterwarnings("ignore")
    request = json.loads(argv[1])
    request["args"] = parse_args(request.get("args") or ())
    try:
        dump(**request)
    except KinspectError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
