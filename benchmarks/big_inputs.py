"""Time and peak memory of `kinspect ls`, `vec-report` and `report` on a big store and a big trace.

    python benchmarks/big_inputs.py [--variants 625] [--trace-mb 64] [--sizes 1,4,16] [--work DIR]
                                    [--commands ls,vec,report] [--timeout 900]

Seeds (made once into --work, from a real offline compile here): a store variant of the shipped
`add` kernel (`kinspect dump add -t cuda:90`), and a tritonparse trace of the same kernel
(tests/trace_maker.py: one compilation event and one launch event, as tritonparse writes them).
Per size S (1x, 4x, 16x):

- a store of S * --variants variants: the seed's folder again and again under distinct names, each
  with its own record.json (distinct hash, name, BLOCK_SIZE and one of 64 kernel names, as a
  capture of a big program leaves it; the stage files are hard links of the seed's, which the
  commands only read);
- a trace of about S * --trace-mb MB: the seed's compilation event again and again with distinct
  hashes, each followed by 8 launch events of it with distinct grids.

Each command runs in a fresh subprocess with a fresh KINSPECT_CACHE_DIR (a cold read, the worst
case); its wall time and peak RSS (getrusage of the child) are printed per size, with the ratios
4x/1x and 16x/1x (linear growth: about 4 and 16; a flat memory ratio: streaming).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KERNELS = 64            # distinct kernel names in a synthetic store: a program, so vec-report ranks it
LAUNCHES = 8            # launch events per compilation in a synthetic trace


def kinspect() -> list[str]:
    return [sys.executable, "-m", "kinspect"]


def seed_store(work: Path) -> Path:
    out = work / "seed-store"
    if not list(out.glob("*/*/record.json")):
        subprocess.run(kinspect() + ["dump", "add", "-t", "cuda:90", "-o", str(out)], check=True,
                       capture_output=True)
    return next(out.glob("*/*/record.json")).parent


def seed_trace(work: Path) -> Path:
    out = work / "seed-trace"
    found = list((out / "trace-none").glob("*.ndjson"))
    if not found:
        subprocess.run([sys.executable, str(ROOT / "tests" / "trace_maker.py"), str(out),
                        f"{ROOT / 'kernels' / 'elementwise.py'}:add_kernel", "cuda:90", "none"], check=True,
                       capture_output=True)
        found = list((out / "trace-none").glob("*.ndjson"))
    return found[0]


def make_store(seed: Path, n: int, out: Path) -> Path:
    """n variants, each a folder of hard links to the seed's stages and its own record.json."""
    if (out / ".done").is_file():
        return out
    shutil.rmtree(out, ignore_errors=True)
    record = json.loads((seed / "record.json").read_text())
    stages = [p for p in seed.iterdir() if p.name not in ("record.json", ".kinspect.lock")]
    for i in range(n):
        h = hashlib.sha256(f"{i}".encode()).hexdigest()
        kernel = f"{record['kernel']}_{i % KERNELS}"
        name = f"cuda-90_BLOCK_SIZE-{1024 + i}_w4_s3_{h[:8]}"
        folder = out / kernel / name
        folder.mkdir(parents=True)
        for p in stages:
            os.link(p, folder / p.name)
        r = dict(record, hash=h, name=name, kernel=kernel, constexprs={"BLOCK_SIZE": 1024 + i})
        (folder / "record.json").write_text(json.dumps(r, indent=1, sort_keys=True))
    (out / ".done").write_text("")
    return out


def make_trace(seed: Path, mb: float, out: Path, launches: int = LAUNCHES) -> Path:
    """About `mb` MB of NDJSON: the seed's compilation with distinct hashes, each followed by
    `launches` launch events of it (grids 1 to 8 in turn: a program launches a kernel with few shapes)."""
    if out.is_file() and (out.parent / (out.name + ".done")).is_file():
        return out
    events = [json.loads(line) for line in seed.read_text().splitlines() if line.strip()]
    compile_ = next(e for e in events if e.get("event_type") == "compilation")
    launch = next(e for e in events if e.get("event_type") == "launch")
    old = compile_["payload"]["metadata"]["hash"]
    c_text, l_text = json.dumps(compile_), json.dumps(launch)
    target, written, i = int(mb * 1e6), 0, 0
    with open(out, "w") as f:
        while written < target:
            h = hashlib.sha256(f"{i}".encode()).hexdigest()
            lines = [c_text.replace(old, h)]
            base = l_text.replace(old, h)
            for j in range(launches):
                lines.append(base.replace('"grid": [1]', f'"grid": [{j % 8 + 1}]'))
            chunk = "\n".join(lines) + "\n"
            f.write(chunk)
            written += len(chunk)
            i += 1
    (out.parent / (out.name + ".done")).write_text(str(i))
    return out


def measure(args: list[str], timeout: float) -> tuple[float, float, str]:
    """(wall seconds, peak RSS in MB, status) of `kinspect ARGS` in a fresh process and cache."""
    cache = tempfile.mkdtemp(prefix="kinspect-cache-")
    env = dict(os.environ, KINSPECT_CACHE_DIR=cache)
    t0 = time.perf_counter()
    proc = subprocess.Popen(kinspect() + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                            cwd=tempfile.gettempdir())
    status = "ok"
    try:
        _, err = proc.communicate(timeout=timeout)
        if proc.returncode:
            status = f"exit {proc.returncode}: {err.decode(errors='replace').strip().splitlines()[-1:]}"
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        status = "timeout"
    wall = time.perf_counter() - t0
    shutil.rmtree(cache, ignore_errors=True)
    # this process waits for one child only (main runs each measure in a process of its own), so
    # RUSAGE_CHILDREN's ru_maxrss (KB on Linux) is that child's peak
    return wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, status


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--variants", type=int, default=625)
    ap.add_argument("--trace-mb", type=float, default=64)
    ap.add_argument("--sizes", default="1,4,16")
    ap.add_argument("--commands", default="ls,vec,report")
    ap.add_argument("--inputs", default="store,trace")
    ap.add_argument("--work", default=None)
    ap.add_argument("--timeout", type=float, default=900)
    a = ap.parse_args()
    work = Path(a.work or tempfile.mkdtemp(prefix="big-inputs-"))
    work.mkdir(parents=True, exist_ok=True)
    sizes = [int(s) for s in a.sizes.split(",")]
    commands = {"ls": lambda p, out: ["ls", str(p)],
                "vec": lambda p, out: ["vec-report", str(p), "--top", "3"],
                "report": lambda p, out: ["report", str(p), "-o", str(out), "--no-bench"]}
    chosen = a.commands.split(",")
    results: dict[tuple[str, str, int], tuple[float, float, str]] = {}
    for size in sizes:
        inputs = {}
        if "store" in a.inputs:
            inputs["store"] = make_store(seed_store(work), a.variants * size, work / f"store-{size}x")
        if "trace" in a.inputs:
            inputs["trace"] = make_trace(seed_trace(work), a.trace_mb * size, work / f"trace-{size}x.ndjson")
        for kind, path in inputs.items():
            for c in chosen:
                out = work / f"report-{kind}-{size}x.html"
                # a fresh measuring process per run: RUSAGE_CHILDREN holds the peak of every child waited for
                r = subprocess.run([sys.executable, __file__, "--one", json.dumps(commands[c](path, out)),
                                    str(a.timeout)], capture_output=True, text=True)
                wall, peak, status = json.loads(r.stdout.strip().splitlines()[-1])
                results[(kind, c, size)] = (wall, peak, status)
                print(f"  {kind:<6}{c:<7}{size:>3}x  {wall:8.1f} s  {peak:8.0f} MB  {status}", flush=True)
    described = {"store": f"{a.variants} variants", "trace": f"{a.trace_mb:g} MB"}
    print(f"\n1x = {', '.join(f'{k}: {v}' for k, v in described.items() if k in a.inputs)}; wall s / peak RSS MB")
    head = f"{'input':<7}{'command':<8}" + "".join(f"{f'{s}x':>18}" for s in sizes) + \
        "".join(f"{f'{s}x/{sizes[0]}x':>16}" for s in sizes[1:])
    print(head)
    for kind in ("store", "trace"):
        for c in chosen:
            if (kind, c, sizes[0]) not in results:
                continue
            cells = [results[(kind, c, s)] for s in sizes]
            line = f"{kind:<7}{c:<8}" + "".join(f"{f'{w:.1f}s {m:.0f}MB' + ('!' if st != 'ok' else ''):>18}"
                                                for w, m, st in cells)
            w0, m0 = cells[0][0], cells[0][1]
            line += "".join(f"{f'{w / w0:.1f}x {m / m0:.1f}x':>16}" for w, m, _ in cells[1:])
            print(line)
    print("('!': the command failed or timed out; its figures are up to that point)")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--one":
        print(json.dumps(measure(json.loads(sys.argv[2]), float(sys.argv[3]))))
    else:
        main()
