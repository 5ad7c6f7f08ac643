"""What skipping package `__init__.py`s saves, and that it changes no variant (kinspect.compile.light).

    python benchmarks/real_files.py CORPUS_DIR ... --json RUN.json     # first: which kernels
    python benchmarks/package_init.py RUN.json [--python PY] [-j 2] [--rounds 1]

For every kernel of a real_files.py run whose module kinspect imports without running its packages'
`__init__.py`, `kinspect dump FILE:KERNEL` (no flags, a fresh process and store each time) runs with
`KINSPECT_PACKAGE_INIT=1` (every `__init__` runs) and without, alternating which goes first, and
prints per kernel the CPU seconds of each (user+system, children included), their ratio, and whether
the two stored variants are the same: every stage file byte for byte, the request key (kinspect's
hash of what decides the compile), the summary's lines. Where the two differ only in the "loaded"
line, the ordinary import failed (a package `__init__` needs a module this machine lacks) and the
light one did not. Ends with the medians and the count of identical variants.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import statistics
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.real_files import _run  # noqa: E402

# the summary's lines with times, which differ run to run: "  ttir   50   3.2 KiB   8.0  add_kernel.ttir",
# "  JIT total 177.0 ms (compiled; IR from AST 45.5 ms, storing 1.1 ms)"
VARYING = re.compile(r"^\s+(source|ttir|ttgir|llir|ptx|cubin|sass|json|amdgcn|hsaco)\s|JIT total")


def dump(python: str, kernel: str, full: bool) -> dict:
    with tempfile.TemporaryDirectory(prefix="kinspect-pkginit-") as tmp:
        rc, _, out, cpu = _run(python, ["dump", kernel, "--store", "out"], tmp,
                               env={"KINSPECT_PACKAGE_INIT": "1"} if full else None)
        digest, request = hashlib.sha256(), ""
        for f in sorted(Path(tmp, "out").rglob("*")):
            if f.is_file() and f.suffix != ".json" and f.name != "lock":
                digest.update(f.relative_to(tmp).as_posix().encode() + b"\0" + f.read_bytes())
        for record in Path(tmp, "out").glob("*/*/record.json"):
            d = json.loads(record.read_text())
            request = d.get("request") or d.get("extra", {}).get("request", "")    # older stores: in extra
        lines = [ln for ln in out.splitlines() if not VARYING.search(ln)]
        return {"rc": rc, "cpu": cpu, "stages": digest.hexdigest(), "request": request, "lines": lines}


def main() -> None:
    from kinspect.compile import light, loader

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", help="A real_files.py --json output: its kernels are the candidates.")
    ap.add_argument("--python", default=sys.executable, help="The Python that runs kinspect (a venv's).")
    ap.add_argument("-j", "--jobs", type=int, default=2, help="Kernels run at once (each pair in turn).")
    ap.add_argument("--rounds", type=int, default=1, help="Pairs of runs a kernel (medians over them).")
    opts = ap.parse_args()
    if "KINSPECT_PACKAGE_INIT" in os.environ:
        sys.exit("unset KINSPECT_PACKAGE_INIT: this script sets it for one side of each pair")
    run = json.loads(Path(opts.run).read_text())
    kernels = []
    for r in run["results"]:
        where = loader.locate(str(Path(run["corpus"], r["project"], r["file"])))
        if light.skippable(where.file, where.module, where.package, where.root):
            kernels.append((r["project"], f"{where.file}:{r['name']}"))
    print(f"{len(kernels)} of {len(run['results'])} kernels of {opts.run} import without their packages' "
          f"__init__.py; {opts.rounds} round(s), -j {opts.jobs}", flush=True)

    def pairs(item):
        project, kernel = item
        full, light_ = [], []
        for i in range(opts.rounds):
            order = (True, False) if i % 2 == 0 else (False, True)
            for f in order:
                (full if f else light_).append(dump(opts.python, kernel, f))
        return project, kernel, full, light_

    rows = []
    print(f"{'project':<16}{'full cpu s':>11}{'light cpu s':>12}{'ratio':>7}  same variant  kernel")
    with ThreadPoolExecutor(max_workers=opts.jobs) as pool:
        for project, kernel, full, light_ in pool.map(pairs, kernels):
            a, b = statistics.median(x["cpu"] for x in full), statistics.median(x["cpu"] for x in light_)
            f, g = full[0], light_[0]
            same = f["rc"] == g["rc"] and f["stages"] == g["stages"] and f["request"] == g["request"]
            differ = [(x, y) for x, y in zip(f["lines"], g["lines"]) if x != y]
            if len(f["lines"]) != len(g["lines"]):
                differ.append(("(lines)", "(lines)"))
            word = "yes" if same and not differ else ("yes, but the summary differs" if same else "NO")
            rows.append((a, b, same, differ))
            name = kernel.rsplit("/", 1)[-1]
            print(f"{project:<16}{a:>11.2f}{b:>12.2f}{b / a:>7.2f}  {word:<12}  {name}", flush=True)
            for x, y in differ:
                print(f"    full : {x.strip()[:240]}\n    light: {y.strip()[:240]}")
    if rows:
        full_med = statistics.median(r[0] for r in rows)
        light_med = statistics.median(r[1] for r in rows)
        print(f"\nmedian CPU s a kernel: {full_med:.2f} with every __init__, {light_med:.2f} without "
              f"(ratio {light_med / full_med:.2f}); ratios {min(r[1] / r[0] for r in rows):.2f}–"
              f"{max(r[1] / r[0] for r in rows):.2f}; same stored variant {sum(r[2] for r in rows)}/{len(rows)}, "
              f"same summary too {sum(r[2] and not r[3] for r in rows)}/{len(rows)}; load average at the end "
              f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
