"""How kinspect handles real kernel files: a folder of fetched public projects, or tests/corpus.

    python benchmarks/real_files.py CORPUS_DIR [--sample N] [-j J] [--json OUT] [--python PY]
    python benchmarks/real_files.py [-t cuda:90,cuda:80,hip:gfx942] [--only ID,ID] [--verbose]

With CORPUS_DIR (one sub-folder per project, fetched outside this repository): every kernel of
every project (a @triton.jit function the project launches, `k[grid](...)`, or autotunes) is run
through `kinspect dump FILE:KERNEL` with no flags at all, as a new user would, each in a fresh
process from an empty folder; when it compiles, `kinspect vec-report` reads the stored variant;
when it fails with a command to run ("edit and run: kinspect dump ..."), that command is run as
printed. Prints per project: kernels, loaded (the kernel found: imported, or its definitions),
imported, compiled with no flags, compiled with the printed suggestion, failures by cause, and the
median seconds a kernel. Kernels written for other vendors' Triton forks (FlagGems'
runtime/backend/_<vendor>, Liger's and fla's Ascend backends) are counted apart and not run.
The goals' denominator leaves out kernels whose failure is Triton 3.9 refusing the code (an API
it removed) or a compiled extension the project needs (flash_attn_2_cuda, vllm._C): both are
listed, so the reader can check them. --sample N takes N kernels a project, seeded by the project's
name, spread over as many files as possible (the same N picks the same kernels every run).
--rerun-failed JSON keeps a previous run's successes and runs only the rest again. --python runs
kinspect with another interpreter (a venv holding the projects' pure-Python dependencies); --json
writes every kernel's result. Seconds are the wall clock and the CPU time of the dump process.

Without CORPUS_DIR: the corpus of real-style files in tests/corpus, through dump, vec-report and
diff for each target, in this process (click's CliRunner), with its table of successes.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

COMMANDS = ("dump", "vec-report", "diff")
# other vendors' Triton forks: FlagGems' runtime/backend/_<vendor> (not _nvidia), Liger's
# ops/backends/_ascend, fla's backends/triton_ascend
OTHER_VENDOR_RE = re.compile(r"/backends?/_(?!nvidia)[a-z]+/|/backends/triton_ascend/|/_ascend/", re.I)
# `edit and run: kinspect dump FILE:K --arg ...` in a one-line error
SUGGESTION_RE = re.compile(r"edit and run: (kinspect dump \S+(?: (?:--arg|-p|--from|--launch|-t) \S+)*)")
# modules that are compiled extensions, not pure-Python packages a venv could install
EXTENSION_RE = re.compile(r"No module named '([\w.]*(?:_C|_cuda|cuda_\w*|_ext|_cpp_lib|_kernels|marlin|vllm"
                          r"|selective_scan\w*|causal_conv1d\w*|fused_\w+_lib)\b[\w.]*)'")
# Triton 3.9 refusing the code itself: APIs it removed or never had
TRITON_REFUSES_RE = re.compile(r"Block pointers have been removed|do not support \*\*meta|cannot import name '\w+' "
                               r"from 'triton|No module named 'triton\.|module 'triton[\w.]*' has no attribute|"
                               r"has been dropped|is not supported in Triton 3|dot\(\) got an unexpected keyword argument|"
                               r"'DriverConfig' object has no attribute|Cannot access global variable|key contains names that are not "
                               r"kernel arguments|\(inside Triton: ")
TIMEOUT_S = 180


# -- finding kernels ------------------------------------------------------------------------------

def _dotted(node) -> str | None:
    if isinstance(node, ast.Call):
        node = node.func
    parts = []
    while isinstance(node, ast.Attribute):
        parts.insert(0, node.attr)
        node = node.value
    return ".".join([node.id] + parts) if isinstance(node, ast.Name) else None


def _decorator_kind(dec, imported: dict) -> str | None:
    """'jit', 'autotune', 'heuristics', 'gluon' for triton's decorators however imported, else None."""
    d = _dotted(dec)
    if not d:
        return None
    head, _, rest = d.partition(".")
    full = imported.get(head, "triton" if head == "triton" else None)
    if full is None:
        return None
    full = f"{full}.{rest}" if rest else full
    last = full.rsplit(".", 1)[-1]
    if last == "jit":
        return "gluon" if "gluon" in full else "jit"
    return last if last in ("autotune", "heuristics") else None


def _triton_imports(tree) -> dict:
    out = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom) and n.module and n.module.split(".")[0] == "triton":
            for a in n.names:
                out[a.asname or a.name] = f"{n.module}.{a.name}"
        elif isinstance(n, ast.Import):
            for a in n.names:
                if a.name.split(".")[0] == "triton":
                    out[a.asname or a.name.split(".")[0]] = a.name if a.asname else "triton"
    return out


def _top_level(body) -> list:
    """Module-level statements, those under `if has_triton():` / `try:` included."""
    out = []
    for n in body:
        out.append(n)
        if isinstance(n, (ast.If, ast.Try)):
            out += _top_level(n.body + n.orelse + [s for h in getattr(n, "handlers", ()) for s in h.body])
    return out


def _returns_value(fn) -> bool:
    """Whether the function returns a value: a Triton kernel cannot, so it is a device function
    (FlagGems' `@pointwise_dynamic @triton.jit def log_func(x): return tl.log(x)`)."""
    stack = list(fn.body)
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Return) and n.value is not None and not (isinstance(n.value, ast.Constant)
                                                                      and n.value.value is None):
            return True
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(n))
    return False


def find_kernels(project: Path) -> list[dict]:
    """The project's kernels: @triton.jit functions (module level, or in a class as Class.f, or
    `k = triton.jit(k)`) that it launches (`k[grid](...)`) or autotunes, and that return no value
    (one that returns a value is a device function, whatever wraps it)."""
    found, launched = [], set()
    for f in sorted(project.rglob("*.py")):
        try:
            tree = ast.parse(f.read_bytes(), str(f))
        except (SyntaxError, ValueError):
            continue
        rel = f.relative_to(project).as_posix()
        imported = _triton_imports(tree)
        for n in ast.walk(tree):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript):
                d = _dotted(n.func.value)
                if d:
                    launched.add(d.rsplit(".", 1)[-1])
        top = _top_level(tree.body)
        scopes = [("", top)] + [(f"{c.name}.", c.body) for c in top if isinstance(c, ast.ClassDef)]
        for prefix, body in scopes:
            for n in body:
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    kinds = [k for k in (_decorator_kind(d, imported) for d in n.decorator_list) if k]
                    if "jit" in kinds and not _returns_value(n):
                        found.append({"file": rel, "name": prefix + n.name, "tuned": len(kinds) > 1
                                      or len(n.decorator_list) > len(kinds) + ("staticmethod" in map(_dotted,
                                                                                                     n.decorator_list))})
                elif isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
                    v = n.value
                    if isinstance(v, ast.Call) and _decorator_kind(v.func, imported) == "jit" and v.args and \
                            isinstance(v.args[0], ast.Name) and v.args[0].id == n.targets[0].id:
                        found.append({"file": rel, "name": prefix + n.targets[0].id, "tuned": False})
    kernels = [k for k in found if k["tuned"] or k["name"].rsplit(".", 1)[-1] in launched]
    return list({(k["file"], k["name"]): k for k in kernels}.values())


def sample(kernels: list[dict], n: int | None, seed: str) -> list[dict]:
    """n kernels, seeded, from as many files as possible."""
    if not n or n >= len(kernels):
        return kernels
    rng = random.Random(seed)
    pool = kernels[:]
    rng.shuffle(pool)
    chosen, files = [], set()
    for k in pool:
        if k["file"] not in files:
            chosen.append(k)
            files.add(k["file"])
        if len(chosen) == n:
            return chosen
    return chosen + [k for k in pool if k not in chosen][:n - len(chosen)]


# -- running one kernel ---------------------------------------------------------------------------

def _run(python: str, argv: list[str], cwd: str, env: dict | None = None) -> tuple[int, float, str, float]:
    """Exit code, wall seconds, output, and CPU seconds (the process and what it waited for: ptxas,
    nvdisasm), which on a shared machine say more than the wall clock. `env`: more variables."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "TRITON_CACHE_DIR": os.path.join(cwd, ".triton"), **(env or {})}
    t0 = time.perf_counter()
    with tempfile.TemporaryFile(mode="w+") as out:
        p = subprocess.Popen([python, "-m", "kinspect", *argv], cwd=cwd, env=env, stdout=out,
                             stderr=subprocess.STDOUT, text=True)
        timer = threading.Timer(TIMEOUT_S, p.kill)
        timer.start()
        _, status, usage = os.wait4(p.pid, 0)
        timed_out = not timer.is_alive()
        timer.cancel()
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read()
    cpu = usage.ru_utime + usage.ru_stime
    if timed_out:
        return 124, time.perf_counter() - t0, text + f"\nTIMEOUT after {TIMEOUT_S} s", cpu
    return p.returncode, time.perf_counter() - t0, text, cpu


def _error(out: str) -> str:
    lines = [ln.strip() for ln in out.splitlines() if ln.strip()]
    errs = [ln for ln in lines if ln.startswith("error:")]
    if errs:
        return errs[-1]
    return (lines[-1] if lines else "(no output)")[:500]


def cause(rc: int, out: str) -> str:
    """The cause of a failure, in a few words, from kinspect's one line."""
    err = _error(out)
    if rc == 124:
        return "timeout"
    if rc not in (0, 2):
        return "traceback (kinspect crashed)"
    if EXTENSION_RE.search(err):
        return "needs a compiled extension"
    if TRITON_REFUSES_RE.search(err):
        return "Triton 3.9 refuses the code"
    if "No module named" in err:
        return "missing Python module"
    if "cannot load" in err:
        return "loading the file failed"
    if "no kernel" in err or "not found" in err or "is not a @triton.jit kernel" in err:
        return "kernel not found"
    if "failed to compile" in err:
        return "compile failed"
    return "other"


def one_kernel(task: dict) -> dict:
    python, file, name = task["python"], task["path"], task["name"]
    with tempfile.TemporaryDirectory(prefix="kinspect-real-") as tmp:
        rc, secs, out, cpu = _run(python, ["dump", f"{file}:{name}", "--store", "out"], tmp)
        result = {**{k: task[k] for k in ("project", "file", "name")}, "rc": rc, "seconds": round(secs, 2),
                  "cpu_seconds": round(cpu, 2),
                  "imported": "loaded   imported" in out, "defs_only": "loaded   definitions only" in out,
                  "launch": "launch   " in out, "assumed": out.count("\n         ") if "assumed  " in out else 0,
                  "line": _error(out) if rc else "", "cause": cause(rc, out) if rc else ""}
        if rc == 0:
            vrc, vsecs, vout, _ = _run(python, ["vec-report", "out"], tmp)
            result.update(vec_report=vrc == 0, vec_report_seconds=round(vsecs, 2),
                          vec_report_line="" if vrc == 0 else _error(vout))
        else:
            m = SUGGESTION_RE.search(out)
            if m:
                words = shlex.split(m[1])[2:]
                src, _, sout, _ = _run(python, ["dump", *words, "--store", "out"], tmp)
                result.update(suggestion=m[1], suggestion_rc=src, suggestion_line=_error(sout) if src else "")
    return result


def corpus(opts) -> None:
    base = Path(opts.corpus).resolve()
    projects = sorted(p for p in base.iterdir() if p.is_dir() and not p.name.startswith(".")
                      and any(p.rglob("*.py")) and p.name not in ("tools", "baseline-logs"))
    if opts.projects:
        projects = [p for p in projects if p.name in opts.projects.split(",")]
    tasks, vendor = [], Counter()
    for p in projects:
        kernels = find_kernels(p)
        ours = [k for k in kernels if not OTHER_VENDOR_RE.search("/" + k["file"])]
        vendor[p.name] = len(kernels) - len(ours)
        for k in sample(ours, opts.sample, f"kinspect-real-files:{p.name}"):
            tasks.append({**k, "project": p.name, "path": str(p / k["file"]), "python": opts.python})
    # kinspect's own bytecode, as `pip install` leaves it (PYTHONDONTWRITEBYTECODE would otherwise
    # have every process compile kinspect's modules again: about 1 CPU-second a kernel)
    subprocess.run([opts.python, "-m", "compileall", "-q", str(ROOT / "kinspect")], stdout=subprocess.DEVNULL)
    print(f"{len(tasks)} kernels from {len(projects)} projects in {base} "
          f"({sum(vendor.values())} other vendors' kernels counted apart, not run); -j {opts.jobs}", flush=True)
    results, kept = [], {}
    if opts.rerun_failed:       # keep a previous run's successes, run its failures again
        before = json.loads(Path(opts.rerun_failed).read_text())["results"]
        kept = {(r["project"], r["file"], r["name"]): r for r in before if r["rc"] == 0}
        results = [r for r in before if (r["project"], r["file"], r["name"]) in kept
                   and any((t["project"], t["file"], t["name"]) == (r["project"], r["file"], r["name"]) for t in tasks)]
        tasks = [t for t in tasks if (t["project"], t["file"], t["name"]) not in kept]
        print(f"--rerun-failed: {len(results)} successes kept from {opts.rerun_failed}, {len(tasks)} run again",
              flush=True)
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=opts.jobs) as pool:
        for r in pool.map(one_kernel, tasks):
            results.append(r)
            if opts.verbose:
                tag = "OK" if r["rc"] == 0 else f"{r['cause']}: {r['line'][:160]}"
                print(f"  {r['seconds']:6.1f}s {r['project']:<16} {r['file']}:{r['name']}  {tag}", flush=True)
    wall = time.perf_counter() - t0
    print_table(results, vendor, wall)
    if opts.json:
        Path(opts.json).write_text(json.dumps({"corpus": str(base), "results": results, "other_vendors": vendor,
                                               "wall_seconds": wall}, indent=1))


def print_table(results: list[dict], vendor: Counter, wall: float) -> None:
    by = defaultdict(list)
    for r in results:
        by[r["project"]].append(r)
    excluded = ("needs a compiled extension", "Triton 3.9 refuses the code")
    head = (f"{'project':<17}{'kernels':>8}{'loaded':>8}{'imported':>9}{'no flags':>9}{'+vec-rep':>9}"
            f"{'+sugg.':>7}{'s/kernel':>9}{'cpu s':>7}  failed by cause")
    print(head)
    print("-" * len(head))
    total = defaultdict(int)
    for project in sorted(by) + ["all"]:
        rows = results if project == "all" else by[project]
        loaded = sum(1 for r in rows if r["imported"] or r["defs_only"] or r["cause"] == "compile failed")
        imported = sum(1 for r in rows if r["imported"] or (r["cause"] == "compile failed" and
                                                           "definitions only" not in r["line"]))
        ok = sum(1 for r in rows if r["rc"] == 0)
        vec = sum(1 for r in rows if r.get("vec_report"))
        sugg = sum(1 for r in rows if r.get("suggestion_rc") == 0)
        causes = Counter(r["cause"] for r in rows if r["rc"])
        med = statistics.median(r["seconds"] for r in rows) if rows else 0
        cpu = statistics.median(r.get("cpu_seconds", 0) for r in rows) if rows else 0
        print(f"{project:<17}{len(rows):>8}{loaded:>8}{imported:>9}{ok:>9}{vec:>9}{ok + sugg:>7}{med:>9.1f}{cpu:>7.1f}  "
              + ", ".join(f"{n} {c}" for c, n in causes.most_common()))
    n = len(results)
    out = [r for r in results if r["cause"] in excluded]
    denominator = n - len(out)
    ok = sum(1 for r in results if r["rc"] == 0)
    vec = sum(1 for r in results if r.get("vec_report"))
    sugg = sum(1 for r in results if r.get("suggestion_rc") == 0)
    secs = [r["seconds"] for r in results]
    print(f"\nother vendors' kernels, not run: " + ", ".join(f"{p} {c}" for p, c in sorted(vendor.items()) if c))
    print(f"left out of the goals: {len(out)} ({', '.join(f'{c} {k}' for k, c in Counter(r['cause'] for r in out).items())})")
    if denominator:
        print(f"no flags: {ok}/{denominator} compiled ({100 * ok / denominator:.1f}%), {vec} with a vec-report "
              f"({100 * vec / denominator:.1f}%); with the printed suggestion: {ok + sugg}/{denominator} "
              f"({100 * (ok + sugg) / denominator:.1f}%)")
    if secs:
        cpus = sorted(r.get("cpu_seconds", 0) for r in results)
        print(f"seconds a kernel (dump, a fresh process): median {statistics.median(secs):.1f}, "
              f"p90 {sorted(secs)[int(0.9 * (len(secs) - 1))]:.1f}; CPU seconds (user+system, ptxas included) "
              f"median {statistics.median(cpus):.1f}, p90 {cpus[int(0.9 * (len(cpus) - 1))]:.1f}; wall {wall:.0f} s; "
              f"load average at the end {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    fails = [r for r in results if r["rc"]]
    if fails:
        print("\nfailures:")
        for r in sorted(fails, key=lambda r: (r["cause"], r["project"])):
            s = f" | suggestion rc={r['suggestion_rc']}" if "suggestion_rc" in r else ""
            print(f"  [{r['cause']}] {r['project']} {r['file']}:{r['name']}: {r['line'][:300]}{s}")


# -- tests/corpus ---------------------------------------------------------------------------------

def shipped_corpus(opts) -> None:
    import warnings

    from click.testing import CliRunner

    from kinspect.cli import main as kinspect
    from tests.corpus.manifest import CORPUS, kernel_path

    warnings.filterwarnings("ignore", message="TRITON_DEFAULT_FP_FUSION is unset")
    targets = opts.targets.split(",")
    entries = [e for e in CORPUS if not opts.only or e["id"] in opts.only.split(",")]
    runner = CliRunner()
    ok = {(c, t): 0 for c in COMMANDS for t in targets}
    seconds = {c: 0.0 for c in COMMANDS}
    failures = []
    with tempfile.TemporaryDirectory(prefix="kinspect-real-files-") as tmp:
        for e in entries:
            for t in targets:
                for command in COMMANDS:
                    out = Path(tmp, e["id"], t.replace(":", "-"), command)
                    argv = [command, kernel_path(e), "-t", t, "--store", str(out), *e.get("flags", [])]
                    if command == "diff":
                        argv += ["--table", "--no-bench"] + ([] if e.get("configs") else ["--num-warps", "4,8"])
                    start = time.perf_counter()
                    r = runner.invoke(kinspect, argv)
                    seconds[command] += time.perf_counter() - start
                    line = r.output.strip().splitlines()[0] if r.output.strip() else repr(r.exception)
                    if r.exit_code == 0:
                        ok[command, t] += 1
                    else:
                        expected = e.get("refused", {}).get(t)
                        why = "Triton refuses" if expected and expected in line else "FAILS"
                        failures.append(f"  {command:<10} {t:<11} {e['id']:<18} {why}: {line}")
                    if opts.verbose:
                        print(f"{command:<10} {t:<11} {e['id']:<18} exit {r.exit_code}", flush=True)
    width = max(len(t) for t in targets)
    print(f"corpus: {len(entries)} kernels in tests/corpus; successes per command and target")
    print(f"  {'command':<10} " + "  ".join(f"{t:>{width}}" for t in targets) + "   seconds")
    for c in COMMANDS:
        print(f"  {c:<10} " + "  ".join(f"{f'{ok[c, t]}/{len(entries)}':>{width}}" for t in targets)
              + f"   {seconds[c]:7.1f}")
    if failures:
        print("failures:")
        print("\n".join(failures))


def main() -> None:
    from tests.corpus.manifest import TARGETS

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", nargs="?", help="A folder with one sub-folder per fetched project.")
    ap.add_argument("--sample", type=int, default=None, help="At most N kernels a project (seeded).")
    ap.add_argument("--projects", default=None, help="Only these projects, comma-separated.")
    ap.add_argument("-j", "--jobs", type=int, default=2, help="Kernels run at once (processes).")
    ap.add_argument("--python", default=sys.executable, help="The Python that runs kinspect (a venv's).")
    ap.add_argument("--json", default=None, help="Write every kernel's result to this file.")
    ap.add_argument("--rerun-failed", default=None, metavar="JSON",
                    help="Keep the successes of a previous --json run and run only its other kernels again.")
    ap.add_argument("-t", "--targets", default=",".join(TARGETS), help="tests/corpus mode: targets.")
    ap.add_argument("--only", default=None, help="tests/corpus mode: entry ids, comma-separated.")
    ap.add_argument("--verbose", action="store_true", help="Print each run as it finishes.")
    opts = ap.parse_args()
    if opts.corpus:
        corpus(opts)
    else:
        shipped_corpus(opts)


if __name__ == "__main__":
    main()
