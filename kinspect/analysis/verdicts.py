"""Verdicts in plain words, tied to source lines where the stages carry locations.

Each rule reads a Findings (the metrics of every stage, resources, the kernel's source) and
returns Verdicts; RULES lists them in the order a reader wants them. A verdict about a problem
names its kind (kinspect.analysis.findings.KINDS): its severity and what to try come from there,
so every view says the same about it.
"""

from __future__ import annotations

import functools
import os
import re
from collections import Counter
from dataclasses import dataclass
from typing import Callable

from kinspect import backends
from kinspect.analysis.findings import KINDS
from kinspect.analysis.load_facts import async_width, blocked, layout_stage, load_lines, narrow_cause
from kinspect.analysis.matrix_lines import FMA_LAYOUTS, Placement, dot_lines, layout_kind
from kinspect.analysis.metrics import StageMetrics
from kinspect.backends import Backend
from kinspect.isa import Isa, find
from kinspect.core.model import Variant
from kinspect.backends.resources import NvidiaLimits, Resources

UNIT_NAMES = {
    "hgmma": "HGMMA (wgmma)", "hmma": "HMMA (mma.sync)", "imma": "IMMA", "tcgen05": "tcgen05 MMA (UTC*MMA)",
    "mfma": "v_mfma (MFMA)", "wmma": "v_wmma (WMMA)", "amx": "AMX tile ops", "ime": "IME (smt.vmadot)",
    "sme": "SME outer products",
}


@dataclass(frozen=True)
class Verdict:
    text: str
    level: str = "info"          # good | info | warn
    line: int | None = None
    file: str | None = None
    kind: str | None = None      # a finding (analysis.findings.KINDS) when it is a problem
    advice: str = ""             # what to try, where the rule knows better than the kind's default

    @property
    def severity(self) -> int:
        return KINDS[self.kind].severity if self.kind else 0

    @property
    def what_to_try(self) -> str:
        return self.advice or (KINDS[self.kind].advice if self.kind else "")



def shared_text(n: int) -> str:
    """Shared memory as diff's table writes it: 8 B, 128 KiB, 1.5 KiB (not 0.0078125 KiB)."""
    if n < 1024:
        return f"{n} B"
    return f"{n // 1024} KiB" if n % 1024 == 0 else f"{n / 1024:.1f} KiB"

def finding(text: str, kind: str, *, line: int | None = None, file: str | None = None, advice: str = "") -> Verdict:
    """A warning verdict of a finding kind."""
    if kind not in KINDS:
        raise KeyError(f"unknown finding kind {kind!r}")
    return Verdict(text, "warn", line, file, kind, advice)


def is_kernel_file(variant: Variant, file: str) -> bool:
    """Is this the kernel's own file (not triton/language/*.py)? Without the kernel's source,
    any file outside Triton's language package counts."""
    src = variant.source
    if src is None:
        return "triton/language" not in file.replace(os.sep, "/") and os.path.basename(file) not in (
            "standard.py", "core.py", "math.py")
    return os.path.basename(file) == os.path.basename(src.file)


@dataclass
class Findings:
    variant: Variant
    isa: StageMetrics | None
    stages: dict[str, StageMetrics]
    resources: Resources
    first_ir: StageMetrics | None = None     # the IR as built from the AST (Triton's `source` stage)
    placement: Placement | None = None       # where the machine code's matrix instructions came from

    @property
    def backend(self) -> Backend:
        return backends.of(self.variant)

    @property
    def gpu(self) -> bool:
        return self.backend.gpu

    @property
    def spec(self) -> Isa | None:
        """The machine code's ISA (kinspect.isa): what the verdicts call its parts."""
        return find(self.isa.dialect) if self.isa is not None else None

    def ir(self) -> list[StageMetrics]:
        return [m for m in self.stages.values() if m is not self.isa]

    def is_kernel_file(self, file: str) -> bool:
        return is_kernel_file(self.variant, file)

    def code(self, file: str, line: int) -> str:
        """The source text of a line, when kinspect has the kernel's source, or that of the @triton.jit
        helper it calls that holds the line (the variant's captured source.json)."""
        src = self.variant.source
        same = src is not None and os.path.basename(file) == os.path.basename(src.file)
        texts = ([(src.line, src.text)] if same and src.text else []) + (self.helper_texts if same else [])
        for first, text in texts:
            lines = text.splitlines()
            i = line - first
            if 0 <= i < len(lines):
                return lines[i].strip()
        return ""

    @functools.cached_property
    def helper_texts(self) -> list[tuple[int, str]]:
        """(first line, text) of the helpers in the kernel's file, from its captured source.json; [] where
        there is none (a store written before it, a trace)."""
        return _helper_texts(self.variant)

    def where(self, file: str, line: int) -> str:
        code = self.code(file, line)
        known = self.variant.source is not None and self.is_kernel_file(file)
        place = f"line {line}" if known else f"{os.path.basename(file)}:{line}"
        return f"{place} {_short(code)}".rstrip()


def _helper_texts(variant: Variant) -> list[tuple[int, str]]:
    from kinspect.core.errors import KinspectError
    from kinspect.files import schema
    from kinspect.files.store import SOURCE, load_json

    if not variant.path or variant.source is None:
        return []
    try:
        captured = load_json(variant.path, SOURCE, schema.KERNEL_SOURCE)
    except KinspectError:           # not there, or not of its shape: the helpers' lines go unquoted
        return []
    out, todo, seen = [], list(captured.get("helpers", ())), set()
    while todo and len(seen) < 256:
        _, helper = todo.pop()
        key = (helper.get("file"), helper.get("line"))
        if key in seen:
            continue
        seen.add(key)
        if os.path.basename(str(helper.get("file", ""))) == os.path.basename(variant.source.file):
            out.append((int(helper.get("line", 0)), str(helper.get("text", ""))))
        todo += list(helper.get("helpers", ()))
    return out


def _short(code: str, width: int = 48) -> str:
    return code if len(code) <= width else code[: width - 1] + "…"


def _fmt_widths(widths) -> str:
    return ", ".join(f"{n}× {bits}-bit" for bits, n in sorted(widths.items(), reverse=True))


MINOR_SHARE = 0.1  # a line with less than this share of the matrix ops is folded into "other lines"


def matrix_rule(f: Findings) -> list[Verdict]:
    """Matrix instructions by the kernel line of the op that made them (analysis.matrix_lines), and
    what became of each tl.dot that made none."""
    if f.isa is None:
        return []
    out = []
    words = f.backend.matrix_words
    if getattr(f.spec, "virtual", False):       # counted in the PTX, in place of machine code
        words = f"{words} (counted in the {f.isa.dialect})"
    total = f.isa.matrix_total
    attributed = 0
    for (file, line), ls in sorted(f.isa.lines.items(), key=lambda kv: kv[0][1]):
        n = sum(ls.matrix.values())
        if n and f.is_kernel_file(file) and n >= MINOR_SHARE * total:
            attributed += n
            units = ", ".join(f"{k} {UNIT_NAMES.get(u, u)}" for u, k in ls.matrix.most_common())
            out.append(Verdict(f"{f.where(file, line)}{_dot_helpers(f, file, line)} → {units}: {words}", "good",
                               line, file))
    rest = total - attributed
    if rest > 0:
        units = ", ".join(f"{n} {UNIT_NAMES.get(u, u)}" for u, n in f.isa.matrix.most_common())
        out.append(Verdict(f"{units}: {words}" if not out else f"(+{rest} matrix instructions at other lines)",
                           "good"))
    if f.placement is not None and f.placement.moved:
        out.append(Verdict(f"matrix instructions {f.placement.how}: the {f.isa.dialect} line table, after "
                           f"scheduling, credits them to other lines", "info"))
    return out + folded_dots(f) + (fma_dots(f) if total == 0 and f.gpu else [])


def _dot_helpers(f: Findings, file: str, line: int) -> str:
    """The lines of the inlined helpers whose dots the TTGIR puts on this kernel line."""
    ttgir = f.stages.get("ttgir")
    helpers = sorted({n for op in (ttgir.matrix_ops if ttgir else ()) if op.loc is not None
                      and (op.loc.file, op.loc.line) == (file, line) for fl, n in op.loc.inlined if fl == file})
    if not helpers:
        return ""
    shown = [f"{n} {_short(f.code(file, n), 32)}".rstrip() for n in helpers[:3]]
    return f" (inlined helper, line {'; line '.join(shown)})"


def folded_dots(f: Findings) -> list[Verdict]:
    """tl.dot lines of the IR built from the AST that no op of the TTGIR comes from: the compiler
    folded them away (an unused result, a constant operand), so they make no instruction at all."""
    last = f.stages.get("ttgir")
    first = f.first_ir or f.stages.get("ttir")
    if last is None or first is None or first is last:
        return []
    # a dot of an inlined @triton.jit helper is, in the TTGIR, at the kernel's line that calls the helper
    # (callsite(helper line at kernel line)); before inlining, at the helper's line: both count as kept
    kept = {frame for op in last.matrix_ops if op.loc is not None for frame in op.loc.frames}
    out = []
    for file, line in sorted(set(dot_lines(first, f.is_kernel_file)) - kept):
        out.append(Verdict(f"{f.where(file, line)} → no instructions: the compiler folded this dot away before "
                           f"the {last.stage.upper()} (its result is unused or constant)", "info", line, file))
    return out


def fma_dots(f: Findings) -> list[Verdict]:
    """No matrix instruction in the machine code: each dot the TTGIR keeps, and what its layout says."""
    ttgir = f.stages.get("ttgir")
    out = []
    if ttgir is not None:
        for (file, line), ops in sorted(dot_lines(ttgir, f.is_kernel_file).items()):
            kinds = {layout_kind(ttgir, op.encoding) for op in ops}
            if kinds <= set(FMA_LAYOUTS):
                text = (f"{f.where(file, line)} → no matrix instructions in {f.isa.dialect}: the TTGIR gives this "
                        f"dot a #{'/#'.join(sorted(kinds))} layout, so it runs on FMA/vector units (its shape or "
                        f"element types do not fit the matrix units of {f.variant.target})")
                out.append(finding(text, "dot_without_matrix_units", line=line, file=file))
            else:
                out.append(Verdict(f"{f.where(file, line)} → the TTGIR maps this dot to matrix units "
                                   f"(#{'/#'.join(sorted(kinds))}) but the {f.isa.dialect} shows no matrix "
                                   f"instruction: is the {f.isa.dialect} of this variant?", "warn", line, file))
        return out
    for m in f.ir():                 # no TTGIR: say what cannot be told apart
        for (file, line), ls in sorted(m.lines.items()):
            if ls.matrix and f.is_kernel_file(file):
                text = (f"{f.where(file, line)} → no matrix instructions in {f.isa.dialect}: the dot runs on "
                        f"FMA/vector units, or was folded away (no TTGIR here to tell which)")
                out.append(finding(text, "dot_without_matrix_units", line=line, file=file))
        if out:
            break
    return out


# What a CPU backend's middle IR (Linalg, vector, triton-cpu) can turn a tl.dot into, best first.
DOT_FORMS = (
    (("linalg.mmt4d", "linalg.batch_mmt4d", "xsmt.mmt4d"), "linalg.mmt4d: packed tiles for the matrix engine"),
    (("linalg.matmul", "linalg.batch_matmul", "linalg.matmul_transpose_a", "linalg.matmul_transpose_b",
      "linalg.batch_reduce_matmul", "linalg.contract"), "linalg.matmul, unpacked"),
    (("vector.contract", "vector.outerproduct"), "a vector contraction"),
    (("triton_cpu.dot", "triton_cpu.brgemm_execute", "amx.tile_mulf"), "triton-cpu's dot"),
)


def dot_rule(f: Findings) -> list[Verdict]:
    """On a CPU backend: where each tl.dot went, stage by stage (the middle IR's form, then what the
    machine code does with it), so "does my matmul use RVV / IME at all" has one answer."""
    if f.isa is None or f.gpu:
        return []
    irs = [m for m in f.ir() if m.dialect == "mlir"]
    first = next((m for m in irs if m.stage in ("ttir", "source")), None)
    dots = sorted((file, line) for (file, line), ls in (first.lines.items() if first else ())
                  if ls.matrix and f.is_kernel_file(file)) if first else []
    if first is None or not first.matrix_total:
        return []
    lowered, stage = None, ""
    for m in irs:
        if m is first or m.stage == "source":
            continue
        for ops, words in DOT_FORMS:
            if any(m.mnemonics.get(op) for op in ops):
                lowered, stage = words, m.stage
                break
        if lowered:
            break
    if lowered is None:
        later = [m.stage for m in irs if m is not first and m.stage != "source"]
        lowered = "no matrix op: a loop nest of multiplies and adds" if later else ""
        stage = later[0] if later else ""
    m = f.isa
    if m.matrix:
        machine = ", ".join(f"{n} {UNIT_NAMES.get(u, u)}" for u, n in m.matrix.most_common())
    elif m.fp_forms.get("fma"):
        machine = f"{m.fp_forms['fma']} vector FMAs ({(f.spec and f.spec.fma_names) or 'fma'}), no matrix unit"
    elif m.fp_forms.get("mul"):
        machine = f"{m.fp_forms['mul']} vector multiplies and separate adds, no matrix unit"
    else:
        machine = f"scalar FP ({m.scalar_fp} instructions), no vector or matrix unit"
    middle = f"{lowered} in {stage} → " if lowered else ""
    head = f.where(*dots[0]) if dots else "tl.dot"
    head += "" if "dot" in head else " tl.dot"
    return [Verdict(f"{head} → {middle}{machine} in the {m.dialect} code", "info",
                    dots[0][1] if dots else None, dots[0][0] if dots else None)]


def loads_rule(f: Findings) -> list[Verdict]:
    """Load widths per source line, and why a narrow one is narrow, from the compiler's IR: the TTGIR
    says which loads are one element (a scalar pointer), the elements each thread holds and what the
    compiler proved (kinspect.analysis.load_facts), each load at its own location; the widths come
    from the LLVM IR where there is one (Triton emits GPU loads as inline PTX, and the PTX/SASS line
    tables then place them at later lines), async copies' from the contiguity the TTGIR records.
    Without a TTGIR, the Python source is read instead, and the verdicts say so."""
    if f.isa is None or not f.gpu:
        return []
    ttgir = layout_stage(f.ir())
    if ttgir is None:
        return loads_from_source(f)
    measured = next((m for m in f.ir() if m.dialect == "llvm" and m.load_widths), f.isa)
    out = []
    for key, ll in sorted(load_lines(ttgir, f.is_kernel_file).items(), key=lambda kv: kv[0][1:]):
        file, line = ll.file, ll.line
        where = f.where(file, line) + _helpers(f, ll)
        if ll.scalar:
            how = "a scalar pointer" if all(op.scalar for op in ll.ops) else "one element a program"
            out.append(Verdict(f"{where} loads one element ({how} in the {ttgir.stage.upper()}): "
                               f"nothing to vectorize", "info", line, file))
            continue
        out += _tensor_loads(f, ttgir, measured, ll, where)
    return out


def _helpers(f: Findings, ll) -> str:
    if not ll.helper_lines:
        return ""
    shown = [f"{n} {_short(f.code(ll.file, n), 32)}".rstrip() for n in ll.helper_lines[:2]]
    return f" (inlined helper, line {'; line '.join(shown)})"


def _tensor_loads(f: Findings, ttgir: StageMetrics, measured: StageMetrics, ll, where: str) -> list[Verdict]:
    file, line = ll.file, ll.line
    tensor = [op for op in ll.ops if not op.one_element]
    copies = [op for op in tensor if op.asynchronous]
    plain = [op for op in tensor if not op.asynchronous]
    widths: Counter = Counter()
    if plain:
        ls = measured.lines.get((file, line))
        # the loads of this helper line at that call, where the measured stage places them so too
        own = ls.helper_load_widths.get(ll.helper_lines) if ls else None
        widths.update(own or (ls.load_widths if ls else {}))
        for op in ll.ops:            # the line's one-element loads are in its widths too
            if op.one_element and op.elem_bits and widths.get(op.elem_bits):
                widths[op.elem_bits] -= 1
        widths += Counter()
    for op in copies:
        w = async_width(op, blocked(ttgir, op.encoding))
        if w:
            widths[w] += 1
    what = "async copies (cp.async)" if copies and not plain else "loads"
    if not widths:
        return [Verdict(f"{where} {what}: the {measured.dialect} has no load instruction on this line", "info",
                        line, file)]
    widest = max(widths)
    if min(widths) >= 128:
        return [Verdict(f"{where} {what} are {widest}-bit", "good", line, file)]
    narrow = min(tensor, key=lambda op: _predicted(ttgir, op))
    cause = narrow_cause(narrow, ttgir, min(widths), f.variant.constexprs)
    if widest <= 32:
        return [finding(f"{where} {what} are {widest}-bit: not vectorized: {cause.text}", "narrow_loads",
                        line=line, file=file, advice=cause.advice)]
    advice = f"; {cause.advice}" if cause.advice else ""
    return [Verdict(f"{where} {what}: {_fmt_widths(widths)}: {cause.text}{advice}", "info", line, file)]


def _predicted(ttgir: StageMetrics, op) -> int:
    """Bits a thread loads at once as the TTGIR lays the load out (for picking the narrowest op)."""
    layout = blocked(ttgir, op.encoding)
    if op.asynchronous:
        return async_width(op, layout) or 0
    return (layout.per_thread * (op.elem_bits or 0)) if layout else 0


def loads_from_source(f: Findings) -> list[Verdict]:
    """Load widths per source line where no TTGIR is stored: which loads read one element is then read
    from the Python source (kinspect.analysis.kernel_ast), and the verdict says so."""
    from kinspect.analysis.kernel_ast import lone_load_lines

    source = next((m for m in f.ir() if m.dialect == "llvm" and m.load_widths), f.isa)
    lone = lone_load_lines(f.variant)     # one element per program (a scalar): nothing to vectorize
    out = []
    for (file, line), ls in sorted(source.lines.items(), key=lambda kv: kv[0][1]):
        if not ls.load_widths or not f.is_kernel_file(file):
            continue
        widest = max(ls.load_widths)
        if min(ls.load_widths) >= 128:
            out.append(Verdict(f"{f.where(file, line)} loads are {widest}-bit", "good", line, file))
        elif widest <= 32 and line in lone:
            out.append(Verdict(f"{f.where(file, line)} loads one element per program ({widest}-bit): nothing to "
                               f"vectorize (read from the Python source: no TTGIR here)", "info", line, file))
        elif widest <= 32:
            out.append(finding(f"{f.where(file, line)} loads are {widest}-bit: not vectorized (no TTGIR here to "
                               f"tell why)", "narrow_loads", line=line, file=file))
        else:
            out.append(Verdict(f"{f.where(file, line)} loads: {_fmt_widths(ls.load_widths)}", "info", line, file))
    return out


def spill_rule(f: Findings) -> list[Verdict]:
    if f.isa is None or getattr(f.spec, "virtual", False):   # PTX: spills are the assembler's, unseen here
        return []
    m, r = f.isa, f.resources
    if f.gpu:
        if m.spill_loads or m.spill_stores or (r.spills or 0) > 0:
            return [finding(f"register spills: {m.spill_stores} spill stores, {m.spill_loads} spill loads "
                            f"({r.spills or 0} bytes of local memory/scratch)", "spills")]
        # without a cubin the sass alone says it, as local-memory loads and stores (the same verdict, so
        # every source of one kernel reads alike)
        return [Verdict("no register spills", "good")] if r.registers is not None or m.instructions else []
    if m.spills_in_loops:
        return [finding(f"{m.spills_in_loops} stack loads/stores inside loops: register pressure spills in the "
                        f"hot path", "cpu_spills")]
    return []


def _top(counter, n: int = 6) -> str:
    return ", ".join(f"{op} {k}" for op, k in counter.most_common(n))


def _lines_of(f: Findings, m: StageMetrics, pick) -> list[tuple[str, int, int]]:
    """(file, line, count) of kernel lines whose instructions `pick(op)` selects, busiest first."""
    found = []
    for (file, line), ls in m.lines.items():
        n = sum(k for op, k in ls.ops.items() if pick(op))
        if n:
            found.append((file, line, n))
    return sorted(found, key=lambda t: (-t[2], t[1]))


def cpu_vector_rule(f: Findings) -> list[Verdict]:
    spec = f.spec
    if f.isa is None or f.gpu or spec is None or not spec.vector_name:
        return []
    name = spec.vector_name
    m = f.isa
    if m.vector == 0:
        return [finding(f"no vector instructions: {name} unused ({m.instructions - m.vector} scalar instructions, "
                        f"{m.scalar_fp} of them FP)", "no_vector_code")]
    share = m.vector / m.instructions if m.instructions else 0
    units = ", ".join(f"{u} {n}" for u, n in m.vector_units.most_common())
    out = [Verdict(f"{m.vector} vector instructions ({share:.0%} of {m.instructions}): {name} used"
                   + (f" ({units})" if units else "") + f": {_top(m.vector_ops)}", "good")]
    if spec.vector_config is not None:
        n = sum(k for op, k in m.mnemonics.items() if spec.vector_config.search(op))
        mix = ", ".join(f"{k}×{c}" for k, c in m.vtypes.most_common(6))
        out.append(Verdict(f"{n} {spec.vector_config_words}: {mix or 'none'}", "info"))
    if spec.register_spill is not None:
        whole = Counter({op: k for op, k in m.vector_ops.items() if spec.register_spill.match(op)})
        if whole:
            out.append(finding(f"whole-register vector loads/stores ({_top(whole)}): LLVM uses these to spill and "
                               f"reload vector registers: register pressure", "cpu_spills"))
    loads = m.load_access
    if loads:
        text = (f"vector loads: {loads.get('unit', 0)} unit-stride, {loads.get('strided', 0)} strided, "
                f"{loads.get('indexed', 0)} indexed (gather)")
        if loads.get("strided", 0) + loads.get("indexed", 0) > loads.get("unit", 0):
            out.append(finding(text, "gather_loads"))
        else:
            out.append(Verdict(text, "info"))
    return out


def fma_rule(f: Findings) -> list[Verdict]:
    """Fused multiply-add or separate multiply and add, in the vector FP code."""
    spec = f.spec
    if f.isa is None or f.gpu or spec is None or not spec.vector_name:
        return []
    forms = f.isa.fp_forms
    fma, mul, add = forms.get("fma", 0), forms.get("mul", 0), forms.get("add", 0)
    if fma:
        return [Verdict(f"{fma} fused multiply-adds ({spec.fma_names}), {mul} separate multiplies", "good")]
    if mul:
        reduce = sum(f.isa.reductions.values())
        how = f" and {reduce} reductions" if reduce and not add else f" and {add} adds"
        return [finding(f"no fused multiply-add: {mul} vector multiplies{how} instead of "
                        f"{spec.fma_names} (a dot lowered as multiply then reduce, or fp fusion off)", "no_fma")]
    return []


def matrix_engine_rule(f: Findings) -> list[Verdict]:
    """A CPU's matrix engine (SpacemiT's IME: smt.vmadot*): used, or why a dot could not use it."""
    spec = f.spec
    if f.isa is None or spec is None or not spec.matrix_unit:
        return []
    name = f"{spec.matrix_name} ({spec.matrix_ops})"
    if f.isa.matrix.get(spec.matrix_unit):
        used = Counter({op: k for op, k in f.isa.vector_ops.items() if op.startswith(spec.matrix_ops)})
        return [Verdict(f"{spec.matrix_name} used: {_top(used)}", "good")]
    dots = [(file, line) for m in f.ir() for (file, line), ls in m.lines.items() if ls.matrix and f.is_kernel_file(file)]
    if f.isa.fp_forms.get("mul") or f.isa.fp_forms.get("fma") or dots:
        where = f"{f.where(*dots[0])}: " if dots else ""
        arch = f.variant.target.arch
        why = next((text for arches, text in spec.matrix_absent if arch in arches),
                   f"the dot runs on {spec.vector_name or 'vector units'} on this {arch} code")
        return [Verdict(f"{where}no {name}: {why}", "info", dots[0][1] if dots else None,
                        dots[0][0] if dots else None)]
    return []


def no_lines_rule(f: Findings) -> list[Verdict]:
    """Machine code tied to no Python line, where the backend says why (spine-triton adds debug info to its
    llir only when SPINE_TRITON_DUMP_PATH is set), so "where in my kernel" needs a run that has it."""
    note = f.backend.no_lines_note
    if f.isa is None or f.gpu or not note:
        return []
    if any(f.is_kernel_file(file) for m in (f.isa, *f.ir()) if m.dialect != "mlir" for file, _ in m.lines):
        return []
    return [Verdict(f"no Python lines: {note}", "info")]


# Callees by what they are: vector math libraries take a vector per call, libm one element.
VECTOR_MATH = ("Sleef_", "_ZGV", "__svml_", "__vml", "__riscv_v", "__mth_")
SCALAR_MATH = frozenset(f"{fn}{suffix}" for fn in (
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "pow", "sqrt", "sin", "cos", "tan", "tanh", "sinh",
    "cosh", "asin", "acos", "atan", "atan2", "erf", "erfc", "cbrt", "fmod", "hypot", "floor", "ceil", "round",
    "trunc", "rint", "fma", "fmax", "fmin") for suffix in ("", "f"))


def calls_rule(f: Findings) -> list[Verdict]:
    if f.isa is None or f.gpu or not f.isa.calls:
        return []
    calls = f.isa.calls
    vector = Counter({c: n for c, n in calls.items() if c.startswith(VECTOR_MATH)})
    scalar = Counter({c: n for c, n in calls.items() if c.lstrip("_") in SCALAR_MATH or c.rstrip("@plt") in SCALAR_MATH})
    other = Counter({c: n for c, n in calls.items() if c not in vector and c not in scalar})
    out = []
    if vector:
        out.append(Verdict(f"vector math library calls: {_top(vector)}", "good"))
    if scalar:
        out.append(finding(f"scalar libm calls: {_top(scalar)}: one element per call, the math is not vectorized",
                           "scalar_libm"))
    if other:
        out.append(Verdict(f"other calls: {_top(other)}", "info"))
    return out


def reduction_rule(f: Findings) -> list[Verdict]:
    if f.isa is None or f.gpu:
        return []
    m = f.isa
    out = []
    if m.reductions.get("ordered"):
        spec = f.spec
        ordered = {op for op in m.mnemonics if spec is not None and spec.ordered_reduction is not None
                   and spec.ordered_reduction.search(op)}
        ops = ", ".join(sorted(ordered)) or "ordered"
        lines = [(file, line, n) for file, line, n in _lines_of(f, m, lambda op: op in ordered)
                 if f.is_kernel_file(file)]
        for file, line, n in lines[:3]:
            out.append(finding(f"{f.where(file, line)} → {n} ordered reductions ({ops}): strictly sequential; "
                               f"unordered forms ({(spec and spec.unordered_reduction) or 'tree reductions'}) need reassociation "
                               f"allowed", "ordered_reduction", line=line, file=file))
        if not lines:
            out.append(finding(f"{m.reductions['ordered']} ordered reductions ({ops}): strictly sequential; "
                               f"unordered forms need reassociation allowed", "ordered_reduction"))
    if m.reductions.get("unordered") or m.matrix_total:
        return out
    # A reduction in the IR that the machine code does as a run of scalar FP adds on one location.
    ir_reduce = [(file, line) for ir in f.ir() for (file, line), ls in ir.lines.items()
                 if ls.kinds.get("reduce") and f.is_kernel_file(file)]
    chains = [(ls.scalar_fp, file, line) for (file, line), ls in m.lines.items() if ls.scalar_fp >= 4]
    if not chains and m.scalar_fp >= 4 and any(ir.kinds.get("reduce") for ir in f.ir()):
        chains = [(m.scalar_fp, "", 0)]
    if chains:
        n, file, line = max(chains)
        at = f" at {os.path.basename(file)}:{line}" if file else ""
        head = f"{f.where(*ir_reduce[0])} " if ir_reduce else ""
        kline = ir_reduce[0][1] if ir_reduce else None
        out.append(finding(f"{head}reduction is a scalar FP chain: {n} scalar FP adds{at}, no vector reduction",
                           "scalar_reduction", line=kline, file=ir_reduce[0][0] if ir_reduce else None))
    return out


LOW_OCCUPANCY = 0.25   # below this share of the SM's warps, occupancy is a finding


def resource_rule(f: Findings) -> list[Verdict]:
    r = f.resources
    if not f.gpu or r.registers is None:
        return []
    shared = f", {shared_text(r.shared_bytes)} shared memory" if r.shared_bytes is not None else ""
    occ = f"; occupancy {r.occupancy.describe()}" if r.occupancy else ""
    out = [Verdict(f"{r.registers} registers{shared}{occ}", "info")]
    o = r.occupancy
    if o is not None and o.fraction < LOW_OCCUPANCY:
        warps = int(f.variant.options.get("num_warps", 4))
        out.append(finding(f"occupancy {o.fraction:.0%} limited by {o.limiter} "
                           f"({_limited(o.limiter, r)})", "low_occupancy",
                           advice=occupancy_advice(f.backend.limits.get(f.variant.target.arch), o, warps, r)))
    return out


def _limited(limiter: str, r: Resources) -> str:
    if limiter in ("registers", "VGPRs"):
        return f"{r.registers} per thread"
    if limiter in ("shared memory", "LDS"):
        return f"{shared_text(r.shared_bytes or 0)} per block"
    return f"{r.occupancy.blocks} block(s) per SM"


def occupancy_advice(lim, o, warps: int, r: Resources) -> str:
    """What would fit one more block per SM, in the variant's own numbers (`lim`: the occupancy model of
    its backend for its arch)."""
    nxt = o.blocks + 1
    if o.limiter == "registers" and isinstance(lim, NvidiaLimits):
        fit = lim.regs_per_sm // (nxt * warps * 32) // 8 * 8
        smaller = f"num_warps={warps // 2} or " if warps > 1 else ""
        return (f"{nxt} blocks would fit with at most {fit} registers per thread (now {r.registers}): "
                f"{smaller}a smaller tile (BLOCK/XBLOCK)")
    if o.limiter == "shared memory" and isinstance(lim, NvidiaLimits):
        fit = lim.shared_per_sm // nxt - lim.shared_reserved_per_block
        return (f"{nxt} blocks would fit with at most {fit / 1024:.0f} KiB shared memory per block (now "
                f"{shared_text(r.shared_bytes or 0)}): fewer num_stages or smaller tiles")
    if o.limiter == "blocks":
        return f"{warps} warp(s) per block use few of the SM's warps at {o.blocks} blocks: num_warps={warps * 4}"
    return KINDS["low_occupancy"].advice


RULES: tuple[Callable[[Findings], list[Verdict]], ...] = (
    matrix_rule, dot_rule, loads_rule, spill_rule, cpu_vector_rule, fma_rule, reduction_rule, matrix_engine_rule, calls_rule,
    no_lines_rule, resource_rule,
)


def verdicts(f: Findings) -> list[Verdict]:
    """Every rule's verdicts; a finding's advice speaks to who wrote the kernel (findings.advice_for)."""
    import dataclasses

    from kinspect.analysis.findings import advice_for
    from kinspect.analysis.kernel_ast import is_inductor

    inductor = is_inductor(f.variant)
    return [dataclasses.replace(v, advice=advice_for(v.kind, v.advice, inductor)) if v.kind and inductor else v
            for rule in RULES for v in rule(f)]
