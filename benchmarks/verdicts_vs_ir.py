"""Load and dot verdicts checked against the compiler's own IR (issue 38, item 3).

Compiles the kernels of tests/ir_cases/ (written in the styles of attorch, kernl, sglang and torchao,
and a user's RMSNorm; unsloth's and LightLLM's styles held out, written after the rules) offline for cuda:90 and cuda:80, draws kinspect's verdicts, and checks each
load and dot verdict against facts read here from the variant's TTGIR and SASS text with this
script's own small readers (not kinspect's parsers):

- a narrow-load finding ("not vectorized") on a line whose TTGIR loads are all one element
  (`!tt.ptr<T>`), or on a line with no TTGIR load at all: contradicted;
- a narrow-load finding whose load holds fewer elements than 16 bytes' worth per thread over the
  whole block (shape / threads from its `#ttg.blocked` layout), that does not say so ("per thread"):
  wrong cause;
- "one element ... nothing to vectorize" on a line with a tensor load: contradicted;
- "folded this dot away" on a line a TTGIR dot's location (callsite frames included) names:
  contradicted; a matrix verdict on a line no TTGIR dot names: contradicted;
- 32-bit LDGSTS (async copies) in the SASS with no narrow-load finding on async copies, where the
  TTGIR holds an async copy of more than one element that is not proven 16 bytes a thread (its
  `contiguity` times its element width): missed. One-element async copies (a scalar index loaded in a
  pipelined loop, `tensor<1x!tt.ptr<i32>>`) are 32-bit LDGSTS and need no finding.

    .venv/bin/python benchmarks/verdicts_vs_ir.py --out after.json
    PYTHONPATH=/path/to/main .venv/bin/python benchmarks/verdicts_vs_ir.py --out before.json   # older kinspect
    .venv/bin/python benchmarks/verdicts_vs_ir.py --compare before.json after.json
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from collections import Counter
from math import prod
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES_DIR = ROOT / "tests" / "ir_cases"
TARGETS = ("cuda:90", "cuda:80")

# (file, kernel, constexprs, options): the values come from each file's kinspect_examples
CASES = [
    ("attorch_style.py", "rms_norm_forward_kernel", {}, {}),
    ("attorch_style.py", "rms_norm_backward_rows_kernel", {}, {}),
    ("kernl_style.py", "attention_forward", {}, {}),
    ("kernl_style.py", "layer_norm_backward_dx", {}, {}),
    ("sglang_style.py", "permute_tokens_kernel", {}, {}),
    ("sglang_style.py", "grouped_gemm_kernel", {}, {}),
    ("sglang_style.py", "post_reorder_kernel", {}, {}),
    ("torchao_style.py", "per_group_rowwise_scales_kernel", {}, {}),
    ("torchao_style.py", "scaled_mm_kernel", {}, {}),
    ("user_rmsnorm.py", "rmsnorm_kernel", {}, {}),
    ("user_rmsnorm.py", "rmsnorm_kernel", {"BLOCK_N": 1024}, {}),
    # held out: written after the rules, run once before and after, never tuned to
    ("unsloth_style.py", "_cross_entropy_forward", {}, {}),
    ("unsloth_style.py", "_rope_embedding", {}, {}),
    ("lightllm_style.py", "_fwd_kernel_token_att1", {}, {}),
    ("lightllm_style.py", "_fwd_kernel_token_softmax", {}, {}),
    # found by benchmarks/inference_accuracy.py's IR check on FastVideo (heldout46): scalar loads only
    ("fastvideo_style.py", "block_map_to_index_kernel", {}, {}),
    # found on flashattention2-custom-mask (heldout52): a helper's 128-bit tiles and 32-bit rows at one call
    ("attn_bwd_style.py", "attn_bwd_dkdv", {}, {}),
    # found on recsys-examples (heldout51) once helpers' loads had their own verdicts: a helper's scalar
    # and tensor loads at one call, which the check now tells apart by the helper line the verdict names
    ("jagged_style.py", "concat_jagged_kernel", {}, {}),
]

# #loc12 = loc("/x/k.py":48:17)      #loc52 = loc("m_start"(#loc5))      #loc78 = loc(callsite(#loc69 at #loc68))
LOC_FILE = re.compile(r'^#(loc\w*) = loc\("([^"]*)":(\d+):\d+\)')
LOC_NAMED = re.compile(r'^#(loc\w*) = loc\("[^"]*"\(#(loc\w*)\)\)')
LOC_CALL = re.compile(r'^#(loc\w*) = loc\(callsite\(#(loc\w*) at #(loc\w*)\)\)')
# ... : tensor<64x!tt.ptr<f32>, #blocked> loc(#loc12)
OP_LOC = re.compile(r'loc\(#(loc\w*)\)\s*$')
POINTER_TENSOR = re.compile(r'tensor<((?:\d+x)+)!tt\.ptr<(\w+)>, #([\w.]+)')
# module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ...}
NUM_WARPS = re.compile(r'"ttg\.num-warps" = (\d+)')
BLOCKED = re.compile(r'^#(\w+) = #ttg\.blocked<\{sizePerThread = \[([\d, ]+)\], threadsPerWarp = \[([\d, ]+)\], '
                     r'warpsPerCTA = \[([\d, ]+)\], order = \[([\d, ]+)\]')
DOT_OPS = (" tt.dot ", " ttng.warp_group_dot ", " ttng.tc_gen5_mma ", " tt.dot_scaled ")
LOAD_OPS = (" tt.load ", " ttg.async_copy_global_to_local ")
# LDGSTS.E.BYPASS.LTC128B.128 [R1], desc[UR4][R2.64]      LDGSTS.E [R5+0x100], desc[UR6][R8.64]
LDGSTS = re.compile(r'\bLDGSTS(?P<mods>(?:\.\w+)*)')
CONTIGUITY = re.compile(r"contiguity = (\d+)")
BITS = {"f16": 16, "bf16": 16, "f32": 32, "i32": 32, "i64": 64, "f64": 64, "i8": 8, "i16": 16, "f8E4M3FN": 8}


def frames_table(text: str) -> dict[str, list[int]]:
    """#locN -> the kernel-file lines of all its frames (callsites included)."""
    file_loc, named, calls = {}, {}, {}
    for line in text.splitlines():
        if (m := LOC_FILE.match(line)):
            file_loc[m[1]] = int(m[3])
        elif (m := LOC_NAMED.match(line)):
            named[m[1]] = m[2]
        elif (m := LOC_CALL.match(line)):
            calls[m[1]] = (m[2], m[3])

    def lines(ref, depth=0):
        if depth > 50:
            return []
        if ref in file_loc:
            return [file_loc[ref]]
        if ref in named:
            return lines(named[ref], depth + 1)
        if ref in calls:
            return lines(calls[ref][1], depth + 1) + lines(calls[ref][0], depth + 1)
        return []

    return {ref: lines(ref) for ref in set(file_loc) | set(named) | set(calls)}


def ttgir_facts(text: str) -> dict:
    """Per kernel line: its loads (scalar? elements, threads, element bits) and whether a dot is there."""
    frames = frames_table(text)
    layouts = {}
    for line in text.splitlines():
        if (m := BLOCKED.match(line)):
            tpw = [int(x) for x in m[3].split(",")]
            wpc = [int(x) for x in m[4].split(",")]
            layouts[m[1]] = prod(tpw) * prod(wpc)
    warps = NUM_WARPS.search(text)
    threads = int(warps[1]) * 32 if warps else None
    loads: dict[int, list[dict]] = {}
    dots: set[int] = set()
    narrow_copies = 0      # async copies of more than one element not proven 16 bytes a thread
    for line in text.splitlines():
        loc = OP_LOC.search(line)
        if not loc:
            continue
        where = frames.get(loc[1], [])
        if any(op in line for op in DOT_OPS):
            dots.update(where)
        if any(op in line for op in LOAD_OPS):
            types = line.rsplit(" : ", 1)[-1]
            t = POINTER_TENSOR.search(types)
            fact = {"scalar": t is None, "frames": set(where)}
            if t:
                fact.update(elements=prod(int(d) for d in t[1].split("x")[:-1]), bits=BITS.get(t[2]),
                            threads=layouts.get(t[3], threads))
            for n in where:
                loads.setdefault(n, []).append(fact)
            if " ttg.async_copy_global_to_local " in line and t and fact["elements"] > 1:
                contiguity = CONTIGUITY.search(line)
                if not contiguity or int(contiguity[1]) * (fact["bits"] or 0) < 128:
                    narrow_copies += 1
    return {"loads": loads, "dots": dots, "narrow_copies": narrow_copies}


def ldgsts_32(sass: str) -> int:
    n = 0
    for m in LDGSTS.finditer(sass):
        mods = m["mods"].split(".")
        if not any(x in ("64", "128") for x in mods):
            n += 1
    return n


def helper_line(text: str) -> int | None:
    """The innermost helper line a verdict names (`line 41 ... (inlined helper, line 17 m = tl.load(...))`),
    else None."""
    _, found, rest = text.partition("(inlined helper, ")
    lines = re.findall(r"(?:^|; )line (\d+)", rest) if found else []
    return int(lines[-1]) if lines else None


def check(verdicts: list[dict], facts: dict, sass: str) -> Counter:
    """Counts per case: checked and contradicted."""
    c = Counter()
    loads, dots = facts["loads"], facts["dots"]
    narrow_async = False
    for v in verdicts:
        text, line = v["text"], v["line"]
        if line is None:
            continue
        at = loads.get(line, [])
        inner = helper_line(text)
        if inner is not None:       # a load of an inlined helper at that call: the loads at its line there
            at = [f for f in at if inner in f["frames"]]
        if "not vectorized" in text:
            c["narrow: checked"] += 1
            if "async" in text:
                narrow_async = True
            if not at:
                c["narrow: line has no load in the TTGIR"] += 1
            elif all(f["scalar"] for f in at):
                c["narrow: a one-element load flagged"] += 1
            else:
                few = [f for f in at if not f["scalar"] and f.get("bits") and f.get("threads")
                       and f["elements"] * f["bits"] < 128 * f["threads"]]
                if few and "per thread" not in text:
                    c["narrow: wrong cause (too few elements per thread)"] += 1
        elif "nothing to vectorize" in text:
            c["one element: checked"] += 1
            if any(not f["scalar"] and f.get("elements", 1) > 1 for f in at):
                c["one element: a tensor load said one element"] += 1
            if not at:
                c["one element: line has no load in the TTGIR"] += 1
        elif re.search(r"\bloads\b|async copies", text):
            c["other load verdicts: checked"] += 1
            if not at:
                c["other load verdicts: line has no load in the TTGIR"] += 1
        if "folded this dot away" in text:
            c["dots: checked"] += 1
            if line in dots:
                c["dots: said folded, the TTGIR holds it"] += 1
        elif re.search(r"HGMMA|HMMA|IMMA|v_mfma", text):
            c["dots: checked"] += 1
            if line not in dots:
                c["dots: matrix verdict on a line with no TTGIR dot"] += 1
    n32 = ldgsts_32(sass)
    if n32:
        c["LDGSTS 32-bit: seen"] += n32
        if not narrow_async and facts.get("narrow_copies", 1):
            c["LDGSTS 32-bit: no narrow-load verdict"] += n32
    return c


def run(out: Path | None, only: str = "") -> dict:
    from kinspect import api
    from kinspect.analysis import analyse

    results = {}
    with tempfile.TemporaryDirectory() as store:
        for file, kernel, consts, options in CASES:
            if only and only not in file:
                continue
            for target in TARGETS:
                label = f"{file.removesuffix('.py')}:{kernel}" + "".join(f" {k}={v}" for k, v in consts.items())
                try:
                    d = api.dump(f"{CASES_DIR / file}:{kernel}", target=target, constexprs=dict(consts),
                                 out_dir=store, **options)
                except Exception as e:        # noqa: BLE001 - a case that does not compile is reported, not fatal
                    results[f"{label} @ {target}"] = {"error": f"{type(e).__name__}: {e}"[:200]}
                    print(f"{label} @ {target}: did not compile: {e}", file=sys.stderr)
                    continue
                v = d.variant
                report = analyse(v)
                ttgir = Path(v.path, v.stage("ttgir").file).read_text()
                sass = Path(v.path, v.stage("sass").file).read_text()
                verdicts = [{"text": x.text, "line": x.line, "kind": x.kind} for x in report.verdicts]
                counts = check(verdicts, ttgir_facts(ttgir), sass)
                results[f"{label} @ {target}"] = {"counts": dict(counts), "verdicts": verdicts}
                bad = sum(n for k, n in counts.items() if not k.endswith(("checked", "seen")))
                print(f"{label} @ {target}: {bad} contradicted or missed", file=sys.stderr)
    if out:
        out.write_text(json.dumps(results, indent=1))
    return results


def bad_of(counts: dict) -> int:
    return sum(n for k, n in counts.items() if not k.endswith(("checked", "seen")))


def compare(before: dict, after: dict) -> None:
    cases = sorted(set(before) | set(after))
    print(f"{'kernel @ target':64} {'before':>7} {'after':>7}")
    for k in cases:
        b, a = before.get(k, {}).get("counts", {}), after.get(k, {}).get("counts", {})
        print(f"{k:64} {bad_of(b):>7} {bad_of(a):>7}")
    print()
    totals_b, totals_a = Counter(), Counter()
    for k in cases:
        totals_b.update(before.get(k, {}).get("counts", {}))
        totals_a.update(after.get(k, {}).get("counts", {}))
    print(f"{'case':64} {'before':>7} {'after':>7}")
    for key in sorted(set(totals_b) | set(totals_a)):
        print(f"{key:64} {totals_b[key]:>7} {totals_a[key]:>7}")
    print(f"{'contradicted or missed, all':64} {bad_of(totals_b):>7} {bad_of(totals_a):>7}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, help="write the per-variant results as JSON")
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    ap.add_argument("--only", default="", help="only the case files whose name holds this text")
    a = ap.parse_args()
    if a.compare:
        compare(json.loads(a.compare[0].read_text()), json.loads(a.compare[1].read_text()))
        return
    results = run(a.out, a.only)
    total = Counter()
    for r in results.values():
        total.update(r.get("counts", {}))
    for k, n in sorted(total.items()):
        print(f"{k:64} {n:>5}")
    print(f"{'contradicted or missed, all':64} {bad_of(total):>5}")


if __name__ == "__main__":
    main()
