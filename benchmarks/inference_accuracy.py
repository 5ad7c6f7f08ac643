"""How often kinspect's zero-flag values are the ones a project's own code passes to its kernels.

    python benchmarks/inference_accuracy.py CORPUS_DIR [--truth FILE] [-j J] [--json OUT] [--only K,K]

CORPUS_DIR holds public projects fetched outside this repository (one sub-folder each) and a
truth file (default CORPUS_DIR/truth.json) naming, per kernel, the call of the project's own
wrapper that its tests or model make, with the shapes and dtypes they use:

    {"kernels": [{"project": "deepseek-v3", "file": "deepseek-v3/inference/kernel.py",
                  "kernel": "act_quant_kernel", "from": "act_quant(torch.empty(4, 7168, dtype=torch.bfloat16))",
                  "source": "inference/model.py: Linear's input, bf16 activations"}]}

For every kernel two `kinspect dump` runs, each in a fresh process from an empty folder:
- **zero flags**, as a new user would type it: `kinspect dump FILE:KERNEL`;
- **the truth**: `kinspect dump FILE:KERNEL --from CALL`, the wrapper's launch recorded (not run),
  so every value the kernel gets (dtypes of the tensors the wrapper allocates, its constexprs,
  strides, `data_ptr()` addresses) is the project's own.
Both stored records are read (signature, constexprs) and compared per parameter the launch passes
(autotune config and heuristic values, the same in both, are left out) by kind:
- `pointer`: a pointer's element type (`*bf16` vs `*fp16`), tensor descriptors included;
- `int/float`: a scalar's type class (an integer or a float; Triton's specialization of 1 counts);
- `address`: a scalar the project passes as a 64-bit integer (`data_ptr()`), right only as i64;
- `constexpr`: the value.
Then `kinspect vec-report --json` on both variants: whether their verdicts differ (the set of
verdict lines, level and text), and each load and dot verdict checked against the variant's own
TTGIR and SASS by the readers of benchmarks/verdicts_vs_ir.py (independent of kinspect's parsers):
the `IR contradicts` column counts the verdicts that IR contradicts (and 32-bit async copies with no
narrow-load verdict), with kinspect's values / with the project's. A kernel whose truth run fails is
listed and not scored.
Prints per project and per kind: right / compared, and the zero-flag compile rate.

A project's test often runs one call under several parametrized dtypes (`@pytest.mark.parametrize("dtype",
[torch.float16, torch.bfloat16])`), and `from` names one of them. An entry may list the same test's other
calls under `also`; each is dumped too, and a second line scores kinspect's values against the nearest
of the project's launches (the one of `from` and `also` with the most values right). The first table,
against `from` alone, stays the headline figure.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

KINDS = ("pointer", "int/float", "address", "constexpr")
# "on the assumed BLOCK=64, x_ptr=*fp32: line 9 ..." (kinspect.analysis.assumed)
ASSUMED_PREFIX_RE = re.compile(r"^on the assumed .*?: (?=line \d+ )")
MADE_UP = "the launch values come from "
TIMEOUT_S = 300


def _run(argv: list[str], cwd: str) -> tuple[int, str, str, float]:
    start = time.monotonic()
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    try:
        p = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT_S, env=env)
        return p.returncode, p.stdout, p.stderr, time.monotonic() - start
    except subprocess.TimeoutExpired:
        return 124, "", f"timed out after {TIMEOUT_S} s", time.monotonic() - start


def _record(store: Path) -> dict | None:
    found = sorted(store.glob("*/*/record.json"))
    return json.loads(found[0].read_text()) if found else None


def _verdicts(kinspect: list[str], store: Path, cwd: str) -> tuple[list | None, list]:
    """(the variant's verdicts as compared: (line, level, text) with kinspect's labels of its guesses
    left out, or None where vec-report failed; what its TTGIR and SASS contradict of them)."""
    folder = next(iter(sorted(store.glob("*/*/record.json"))), None)
    if folder is None:
        return None, []
    rc, out, _, _ = _run(kinspect + ["vec-report", str(folder.parent), "--json"], cwd)
    if rc != 0:
        return None, []
    try:
        data = json.loads(out)
    except ValueError:
        return None, []
    first = data[0] if isinstance(data, list) and data else data
    contradicted = _against_ir(first.get("verdicts", ()), folder.parent)
    # what the verdicts say of the code: kinspect's labels of its own guesses left out (the "on the
    # assumed ...:" prefix, the made-up-inputs line), so that only a different finding counts
    said = {(v.get("line"), v.get("level"), ASSUMED_PREFIX_RE.sub("", v.get("text") or ""))
            for v in first.get("verdicts", ()) if not (v.get("text") or "").startswith(MADE_UP)}
    return sorted(said, key=lambda t: (t[0] or 0, t[1] or "", t[2] or "")), contradicted


def _against_ir(verdicts, folder: Path) -> list:
    """The verdicts checked against the variant's TTGIR and SASS and what of them that IR contradicts
    (verdicts_vs_ir.check's cases), as [case, count] pairs."""
    from verdicts_vs_ir import check, ttgir_facts     # this script's sibling: python puts its folder on sys.path

    ttgir, sass = next(folder.glob("*.ttgir"), None), next(folder.glob("*.sass"), None)
    if ttgir is None:
        return []
    counts = check([{"text": v.get("text") or "", "line": v.get("line")} for v in verdicts],
                   ttgir_facts(ttgir.read_text()), sass.read_text() if sass else "")
    return sorted([k, n] for k, n in counts.items() if n and not k.endswith("seen"))


def one(entry: dict, corpus: Path, kinspect: list[str]) -> dict:
    target = f"{corpus / entry['file']}:{entry['kernel']}"
    out = {**entry}
    with tempfile.TemporaryDirectory(prefix="kinspect-acc-") as tmp:
        zero, truth = Path(tmp, "zero"), Path(tmp, "truth")
        rc, so, se, secs = _run(kinspect + ["dump", target, "--store", str(zero)], tmp)
        out["zero_rc"], out["zero_s"] = rc, round(secs, 1)
        out["zero_error"] = "" if rc == 0 else (se.strip().splitlines() or [""])[-1][:400]
        out["zero_stdout"] = so
        rc, so, se, secs = _run(kinspect + ["dump", target, "--from", entry["from"], "--store", str(truth)], tmp)
        out["truth_rc"] = rc
        out["truth_error"] = "" if rc == 0 else (se.strip().splitlines() or [""])[-1][:400]
        z, t = _record(zero), _record(truth)
        out["compare"] = compare(z, t) if z and t else []
        out["compare_nearest"], out["nearest"] = out["compare"], entry["from"]
        for i, call in enumerate(entry.get("also", ())):
            also = Path(tmp, f"also{i}")
            rc, *_ = _run(kinspect + ["dump", target, "--from", call, "--store", str(also)], tmp)
            a = _record(also) if rc == 0 else None
            rows = compare(z, a) if z and a else []
            if _right(rows) > _right(out["compare_nearest"]):
                out["compare_nearest"], out["nearest"] = rows, call
        out["truth_assumed"] = _assumed_names(t) if t else []
        if z and t:
            (vz, iz), (vt, it) = _verdicts(kinspect, zero, tmp), _verdicts(kinspect, truth, tmp)
            out["verdicts_differ"] = None if vz is None or vt is None else vz != vt
            out["verdicts_zero"], out["verdicts_truth"] = vz, vt
            out["ir_zero"], out["ir_truth"] = iz, it
    return out


def _right(rows: list[dict]) -> int:
    return sum(r["right"] for r in rows)


def _user(rec: dict) -> dict:
    return rec.get("user") or (rec.get("extra") or {}).get("user") or {}


def _assumed_names(rec: dict) -> list[str]:
    """The parameters a record says were assumed (text lines `NAME=...`, or records with a name)."""
    names = []
    for a in _user(rec).get("assumed") or ():
        name = a.get("name") if isinstance(a, dict) else str(a).split("=", 1)[0].strip()
        names.append(name)
    return names


def _tuned(rec: dict) -> set:
    tuning = _user(rec).get("autotune") or {}
    config = tuning.get("config") or {}
    return set(config.get("kwargs") or {}) | set(tuning.get("heuristics") or {})


def compare(zero: dict, truth: dict) -> list[dict]:
    """Per parameter the truth's launch passes: kind, truth, zero-flag value, right."""
    rows = []
    skip = _tuned(zero) | _tuned(truth) | set(_assumed_names(truth))
    zs, ts = zero.get("signature") or {}, truth.get("signature") or {}
    zc, tc = zero.get("constexprs") or {}, truth.get("constexprs") or {}
    declared = _constexpr_params(truth)
    for name, t in ts.items():
        if name in skip:
            continue
        z = zs.get(name)
        if name in declared:
            tv, zv = tc.get(name), zc.get(name)
            rows.append({"name": name, "kind": "constexpr", "truth": tv, "zero": zv, "right": _same(tv, zv)})
        elif t.startswith("*") or t.startswith("tensordesc"):
            rows.append({"name": name, "kind": "pointer", "truth": t, "zero": z, "right": z == t})
        elif t in ("i64", "u64"):
            rows.append({"name": name, "kind": "address", "truth": t, "zero": z, "right": z == t})
        else:
            tk, zk = _scalar_kind(t, tc.get(name)), _scalar_kind(z, zc.get(name))
            rows.append({"name": name, "kind": "int/float", "truth": f"{t}" + (f"={tc[name]}" if name in tc else ""),
                         "zero": f"{z}" + (f"={zc[name]}" if name in zc else ""), "right": tk == zk})
    return rows


def _constexpr_params(rec: dict) -> set:
    """The kernel's tl.constexpr parameters, from its source text's signature."""
    import ast
    import textwrap

    text = textwrap.dedent((rec.get("source") or {}).get("text") or "")
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return set()
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef)), None)
    if fn is None:
        return set()
    return {a.arg for a in fn.args.args if a.annotation is not None and "constexpr" in ast.unparse(a.annotation)}


def _same(a, b) -> bool:
    return a == b or str(a) == str(b)


def _scalar_kind(sig, value) -> str:
    """'int', 'float', 'one' (an int 1, which Triton specializes), 'none' or the text."""
    if sig == "constexpr":
        return "one" if value == 1 else "none" if value is None else str(value)
    if sig is None:
        return "missing"
    if sig.startswith(("i", "u")):
        return "int"
    if sig.startswith(("fp", "bf")):
        return "float"
    return sig


def tables(results: list[dict]) -> str:
    lines = []
    by_project = defaultdict(list)
    for r in results:
        by_project[r["project"]].append(r)
    head = (f"{'project':<14} {'kernels':>7} {'no flags':>8} {'truth':>5} " +
            " ".join(f"{k:>11}" for k in KINDS) + f" {'all':>9} {'verdicts differ':>15} {'IR contradicts':>14}")
    lines.append(head)
    totals = defaultdict(lambda: [0, 0])
    summary = {"kernels": 0, "compiled": 0, "truth": 0, "differ": 0, "scored": 0}
    for project in sorted(by_project) + ["all"]:
        rows = results if project == "all" else by_project[project]
        counts = defaultdict(lambda: [0, 0])
        for r in rows:
            for c in r.get("compare", ()):
                counts[c["kind"]][0] += c["right"]
                counts[c["kind"]][1] += 1
        compiled = sum(r["zero_rc"] == 0 for r in rows)
        truth = sum(r["truth_rc"] == 0 for r in rows)
        scored = [r for r in rows if r.get("verdicts_differ") is not None]
        differ = sum(bool(r["verdicts_differ"]) for r in scored)
        right = sum(v[0] for v in counts.values())
        total = sum(v[1] for v in counts.values())
        cells = " ".join(f"{counts[k][0]:>5}/{counts[k][1]:<5}" for k in KINDS)
        ir_zero, ir_truth = _ir_bad(scored, "ir_zero"), _ir_bad(scored, "ir_truth")
        lines.append(f"{project:<14} {len(rows):>7} {compiled:>8} {truth:>5} {cells} {right:>4}/{total:<4} "
                     f"{differ:>6}/{len(scored):<8} {ir_zero:>6}/{ir_truth:<7}")
        if project == "all":
            totals, summary = counts, {"kernels": len(rows), "compiled": compiled, "truth": truth, "differ": differ,
                                       "scored": len(scored), "right": right, "total": total,
                                       "ir_zero": ir_zero, "ir_truth": ir_truth,
                                       "ir_checked": _ir_bad(scored, "ir_zero", True) + _ir_bad(scored, "ir_truth", True)}
    pct = (lambda a, b: f"{100 * a / b:.0f}%" if b else "-")
    nearest = defaultdict(lambda: [0, 0])
    for r in results:
        for c in r.get("compare_nearest", r.get("compare", ())):
            nearest[c["kind"]][0] += c["right"]
            nearest[c["kind"]][1] += 1
    also = sum(bool(r.get("also")) for r in results)
    lines.append(f"no-flag compile: {summary['compiled']}/{summary['kernels']} "
                 f"({pct(summary['compiled'], summary['kernels'])}); values right: {summary['right']}/"
                 f"{summary['total']} ({pct(summary['right'], summary['total'])}); " +
                 "; ".join(f"{k} {totals[k][0]}/{totals[k][1]} ({pct(*totals[k])})" for k in KINDS) +
                 f"; verdicts differ in {summary['differ']}/{summary['scored']} kernels; verdicts the IR contradicts: "
                 f"{summary['ir_zero']} with kinspect's values, {summary['ir_truth']} with the project's "
                 f"(of {summary['ir_checked']} load and dot verdicts checked)")
    if also:
        n_right, n_all = sum(v[0] for v in nearest.values()), sum(v[1] for v in nearest.values())
        lines.append(f"against the nearest of the project's launches ({also} kernels list the same test's other "
                     f"calls): values right {n_right}/{n_all} ({pct(n_right, n_all)}); " +
                     "; ".join(f"{k} {nearest[k][0]}/{nearest[k][1]} ({pct(*nearest[k])})" for k in KINDS))
    return "\n".join(lines)


def _ir_bad(rows: list[dict], key: str, checked: bool = False) -> int:
    """The verdicts the IR contradicts (or, `checked`, that were checked against it) in `rows`."""
    return sum(n for r in rows for case, n in r.get(key) or () if case.endswith("checked") == checked)


def details(results: list[dict]) -> str:
    out = []
    for r in results:
        wrong = [c for c in r.get("compare", ()) if not c["right"]]
        status = "compiled" if r["zero_rc"] == 0 else f"FAILED: {r['zero_error']}"
        truth = "" if r["truth_rc"] == 0 else f"; truth run failed: {r['truth_error']}"
        out.append(f"{r['project']}/{r['kernel']}: {status}{truth}")
        for c in wrong:
            out.append(f"    {c['kind']:<10} {c['name']}: project {c['truth']}, kinspect {c['zero']}")
        if r.get("verdicts_differ"):
            only_z = [v for v in r["verdicts_zero"] if v not in r["verdicts_truth"] and v[1] != "good"]
            only_t = [v for v in r["verdicts_truth"] if v not in r["verdicts_zero"] and v[1] != "good"]
            for v in only_z[:3]:
                out.append(f"    verdict only with kinspect's values: {v[2][:130]}")
            for v in only_t[:3]:
                out.append(f"    verdict only with the project's:     {v[2][:130]}")
        for key, whose in (("ir_zero", "kinspect's values"), ("ir_truth", "the project's")):
            for case, n in r.get(key) or ():
                if not case.endswith("checked"):
                    out.append(f"    IR contradicts ({whose}): {case}: {n}")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--truth", type=Path)
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--only", default="")
    ap.add_argument("--python", default=sys.executable, help="the interpreter that runs kinspect")
    ap.add_argument("--tables", nargs="+", type=Path, metavar="JSON",
                    help="run nothing: the tables of earlier runs' --json files (later files replace a kernel's "
                         "earlier result), for the kernels the truth file lists")
    a = ap.parse_args(argv)
    truth = json.loads((a.truth or a.corpus / "truth.json").read_text())
    entries = truth["kernels"]
    if a.only:
        wanted = set(a.only.split(","))
        entries = [e for e in entries if e["kernel"] in wanted or e["project"] in wanted]
    if a.tables:
        return _retable(entries, a.tables)
    kinspect = [a.python, "-m", "kinspect"]
    corpus = a.corpus.resolve()
    start = time.monotonic()
    with ThreadPoolExecutor(a.j) as pool:
        results = list(pool.map(lambda e: one(e, corpus, kinspect), entries))
    print(tables(results))
    print()
    print(details(results))
    print(f"\n{len(results)} kernels in {time.monotonic() - start:.0f} s; kinspect: {shlex.join(kinspect)}")
    if a.json:
        a.json.write_text(json.dumps(results, indent=1, default=str))
    return 0


def _normal(verdicts) -> list | None:
    if verdicts is None:
        return None
    return sorted({(line, level, ASSUMED_PREFIX_RE.sub("", text or "")) for line, level, text in verdicts
                   if not (text or "").startswith(MADE_UP)}, key=lambda t: (t[0] or 0, t[1] or "", t[2] or ""))


def _retable(entries: list[dict], files: list[Path]) -> int:
    """The tables of stored results, the verdicts compared as a fresh run compares them."""
    found = {}
    for f in files:
        for r in json.loads(f.read_text()):
            found[(r["file"], r["kernel"])] = r
    results = []
    for e in entries:
        r = found.get((e["file"], e["kernel"]))
        if r is None:
            continue
        r = {**r, "from": e["from"]}
        if r.get("verdicts_zero") is not None and r.get("verdicts_truth") is not None:
            r["verdicts_zero"], r["verdicts_truth"] = _normal(r["verdicts_zero"]), _normal(r["verdicts_truth"])
            r["verdicts_differ"] = r["verdicts_zero"] != r["verdicts_truth"]
        results.append(r)
    print(tables(results))
    print()
    print(details(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
