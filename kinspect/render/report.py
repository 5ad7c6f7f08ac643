"""Text rendering of analysis reports (vec-report) and of stages annotated with source lines (show)."""

from __future__ import annotations

import os
from typing import Iterable

from kinspect.analysis.stages import is_machine_code
from kinspect.analysis.verdicts import shared_text
from kinspect.render.launches import launch_lines
from kinspect.render.terminal import clean, user_lines

MARK = {"good": "+", "info": "-", "warn": "!"}


def _widths(w) -> str:
    return ", ".join(f"{n}×{bits}-bit" for bits, n in sorted(w.items(), reverse=True))


def vec_report(report) -> str:
    v, m, r = report.variant, report.isa, report.resources
    retarget = v.retarget
    head = f"{v.kernel}  {v.target}  {v.name}"
    where = (f"  {v.trace} (its compilation event at line {v.trace_event}; the stages it holds "
             f"are read from {v.path})" if v.trace else f"  {v.path}")
    out = [head + (f"  (retargeted from {retarget.source})" if retarget else ""), where]
    out += [f"  {line.rstrip()}" for line in user_lines(v)]   # continuation lines keep their indent under their head
    if m is None:
        failed = [n.split(" not derived: ", 1) for n in v.notes if " not derived: " in n]
        unread = [name for name in (p.removeprefix("stage ").split(":", 1)[0] for p in report.problems)
                  if name in {s.name for s in v.stages if is_machine_code(s)}]
        if unread:
            out.append(f"  {unread[0]}: not read (its verdict below says why): no instruction counts and no verdicts "
                       f"from it")
        elif failed:      # the backend's assembly could not be made here: say what it needs, not --retarget
            out.append(f"  no machine-code stage to analyse: the {failed[0][0]} could not be derived here "
                       f"({failed[0][1]})")
        else:
            out.append("  no machine-code stage (sass, amdgcn or CPU assembly) to analyse"
                       + ("; --retarget CPU compiles its LLVM IR for a CPU (kinspect targets)" if v.stage("llir") or
                          any(s.dialect == "llvm" for s in v.stages) else ""))
    else:
        stage = v.stage(m.stage)
        if report.instead:
            out.append(f"  {clean(report.instead)}")
        if stage is not None and stage.derived_by:    # where the code came from: on the folder's line when short
            if len(stage.derived_by) <= 40:
                out[1] += f"  ({m.stage}: {stage.derived_by})"
            else:                                     # a retarget's LLVM and flags: a line of its own
                out.insert(2, f"  {m.stage}: {stage.derived_by}")
        matrix = ", ".join(f"{u} {n}" for u, n in m.matrix.most_common()) or "0"
        out.append(f"  {m.dialect}: {m.instructions:,} instructions; vector {m.vector:,}; matrix {matrix}; "
                   f"scalar FP {m.scalar_fp:,}; other (not in the ISA table) {m.other:,}")
        if m.load_widths:
            out.append(f"  global loads {_widths(m.load_widths)}" +
                       (f"; stores {_widths(m.store_widths)}" if m.store_widths else ""))
        top = ", ".join(f"{op} {n}" for op, n in m.mnemonics.most_common(10))
        out.append(f"  top mnemonics: {top}")
    if r.registers is not None:
        shared = f"; shared {shared_text(r.shared_bytes or 0)}" if r.shared_bytes is not None else ""
        spills = f"; spills {r.spills}" if r.spills is not None else ""
        out.append(f"  registers {r.registers} ({r.source}){spills}{shared}")
    if r.occupancy:
        out.append(f"  occupancy estimate {r.occupancy.describe()}")
    if r.note:
        out.append(f"  {r.note}")
    launched = launch_lines(v)
    for i, line in enumerate(launched):     # what the captured program passed it: shapes, dtypes, strides, grid
        out.append(f"  {'launches' if i == 0 else '':<8} {clean(line)}")
    out.append("  verdicts:")
    for x in report.verdicts:
        out.append(f"    {MARK[x.level]} {x.text}")
        if x.kind:
            out.append(f"        try: {x.what_to_try}")
    if not report.verdicts:
        out.append("    (none)")
    out += [f"  note: {clean(n)}" for n in v.notes]      # a note is one line, whatever its record holds
    return "\n".join(out)


def annotate(lines: Iterable[str], locs: dict[int, tuple[str, int]], source_line) -> Iterable[str]:
    """Stage text with a `# file:line  code` header wherever the source location changes."""
    current = None
    for n, text in enumerate(lines, 1):
        loc = locs.get(n)
        if loc is not None and loc != current:
            current = loc
            code = source_line(*loc)
            yield f";; {os.path.basename(loc[0])}:{loc[1]}  {code}".rstrip() + "\n"
        yield text if text.endswith("\n") else text + "\n"


def line_table(report, limit: int = 40) -> str:
    """Per Python line of the kernel: instructions it produced in each stage, with matrix and
    vector counts in the machine-code stage."""
    from kinspect.analysis.verdicts import Findings

    f = Findings(report.variant, report.isa, report.stages, report.resources)
    stages = list(report.stages)
    keys = sorted({k for m in report.stages.values() for k in m.lines if f.is_kernel_file(k[0])},
                  key=lambda k: k[1])
    if not keys:
        return "  (no source locations in these stages)"
    head = f"  {'line':>5}  {'code':<44}" + "".join(f"{s:>8}" for s in stages) + "   matrix  vector"
    rows = [head]
    for file, line in keys[:limit]:
        counts = "".join(f"{(report.stages[s].lines.get((file, line)).total if (file, line) in report.stages[s].lines else 0):>8}"
                         for s in stages)
        isa = report.isa.lines.get((file, line)) if report.isa else None
        matrix = sum(isa.matrix.values()) if isa else 0
        vector = isa.vector if isa else 0
        code = f.code(file, line)[:44]
        rows.append(f"  {line:>5}  {code:<44}{counts}   {matrix:>6}  {vector:>6}")
    if len(keys) > limit:
        rows.append(f"  ... {len(keys) - limit} more lines (--json has them all)")
    return "\n".join(rows)


def page(reports=(), *, program=None, tunes=None, stored=(), lines: bool = False, counters: bool = False,
         width: int = 160) -> str:
    """What `kinspect vec-report` prints: the program view (kinspect.analysis.program_view.ProgramView:
    its table, its counters with `counters`, the details of its chosen kernels, the tunes of --tune, a
    list of kinspect.tune.outcome.Tuned); or each report, with the tune stored beside it (`stored`, one
    Tuned or None per report). `lines`: each report's per-line table."""
    def one(r) -> str:
        return vec_report(r) + (f"\n  per line:\n{line_table(r)}" if lines else "")

    if program is not None:
        from kinspect.render.measured import section
        from kinspect.render.program import summary
        from kinspect.render.tune import section as tune_section

        parts = [summary(program, width=width)]
        if counters:
            parts.append(section(program))
        parts += [one(r) for r in program.details]
        if tunes is not None:
            parts.append(tune_section(list(tunes)))
        return "\n\n".join(parts)
    if not reports:
        return "no variants found"
    from kinspect.render.tune import stored as stored_tune

    stored = list(stored) or [None] * len(reports)
    return "\n\n".join(one(r) + (stored_tune(t) if t is not None else "") for r, t in zip(reports, stored))
