"""Terminal output of a program diff (`kinspect diff STORE_A STORE_B`): each run's header, one table of
kernels ranked by GPU time lost per step, the story of one kernel and the diffs of its stages."""

from __future__ import annotations

from kinspect.analysis.summary import display_name
from kinspect.diff.programs import KernelChange, ProgramDiff, Run
from kinspect.diff.textdiff import side_by_side, unified
from kinspect.render.terminal import human_bytes


def header(name: str, r: Run) -> list[str]:
    step = "-" if r.step_ms is None else f"{r.step_ms:.4f} ms"
    other = "" if r.other_ms is None else f" (+{r.other_ms / r.steps:.4f} ms of other GPU work)"
    return [f"{name}: {r.path}  [{r.kind}, {r.variants} variants]",
            f"   Triton {', '.join(r.triton) or 'not recorded'}, torch {r.torch or 'not recorded'}, "
            f"device {r.device}",
            f"   Triton kernels' GPU time per step {step}{other}; steps {r.steps} ({r.steps_from})"]


def _pair(x, y, fmt=str) -> str:
    if x is None and y is None:
        return "-"
    fx, fy = ("-" if x is None else fmt(x)), ("-" if y is None else fmt(y))
    return fx if fx == fy else f"{fx}→{fy}"


def _get(side, f):
    return None if side is None else f(side)


def _time(c: KernelChange) -> str:
    a, b = _get(c.a, lambda s: s.timing), _get(c.b, lambda s: s.timing)

    def one(t) -> str:
        if t is None or t.us is None:
            return "-"
        if t.p20_us is None:
            return f"{t.us:.2f}"
        return f"{t.us:.2f} ({t.p20_us:.2f}-{t.p80_us:.2f})"
    if (a is None or a.us is None) and (b is None or b.us is None):
        return "-"
    return f"{one(a)} → {one(b)}"


def _change(c: KernelChange) -> str:
    if c.per_call_change is None:
        return "-"
    mark = {True: " !", False: " ~", None: " ?"}[c.beyond_spread]
    return f"{c.per_call_change:+.0%}{mark}"


def _calls(c: KernelChange, run_a: Run, run_b: Run) -> str:
    a = _get(c.a, lambda s: s.timing.calls)
    b = _get(c.b, lambda s: s.timing.calls)
    return _pair(None if a is None else a / run_a.steps, None if b is None else b / run_b.steps, lambda x: f"{x:g}")


def _fig(c: KernelChange, f, fmt=str) -> str:
    return _pair(_get(c.a, lambda s: f(s.figures)), _get(c.b, lambda s: f(s.figures)), fmt)


def _mix(c: KernelChange) -> str:
    from kinspect.diff.programs import scalar

    def one(s):
        return None if s is None else f"{s.figures.vector}/{s.figures.matrix}/{scalar(s.figures)}"
    return _pair(one(c.a), one(c.b))


def _findings(c: KernelChange) -> str:
    bits = [f"+{k}" for k in c.appeared] + [f"-{k}" for k in c.vanished]
    return " ".join(bits) or ""


def columns(d: ProgramDiff) -> list[tuple[str, callable]]:
    cols = [("#", None), ("kernel", lambda c: display_name(c.kernel)), ("match", lambda c: _short_how(c.how))]
    if d.timed:
        cols += [("lost ms/step", lambda c: "-" if c.lost_ms_per_step is None else f"{c.lost_ms_per_step:+.4f}"),
                 ("µs/call A → B (p20-p80)", _time), ("Δ/call", _change)]
    cols += [("calls/step", lambda c: _calls(c, d.a, d.b)),
             ("regs", lambda c: _fig(c, lambda m: m.registers)), ("spills", lambda c: _fig(c, lambda m: m.spills)),
             ("occupancy", lambda c: _fig(c, lambda m: m.occupancy, lambda x: f"{x:.0%}")),
             ("vec/mat/scalar", _mix),
             ("shared", lambda c: _fig(c, lambda m: m.shared_bytes, human_bytes)),
             ("findings +new -gone", _findings)]
    return [(h, f) for h, f in cols if f is None or h in ("kernel", "match")
            or any(f(c) not in ("-", "") for c in d.changes)]


def _short_how(how: str) -> str:
    return {"name and source": "same", "function, specialization and source": "same"}.get(how, how.split(":")[0])


def table(d: ProgramDiff) -> list[str]:
    cols = columns(d)
    cells = [[h for h, _ in cols]] + [[str(i) if f is None else f(c) for _, f in cols]
                                      for i, c in enumerate(d.changes, 1)]
    widths = [max(len(x[k]) for x in cells) for k in range(len(cols))]
    left = {"kernel", "match", "findings +new -gone"}
    return ["  " + "  ".join(x.ljust(w) if h in left else x.rjust(w) for x, w, (h, _) in zip(line, widths, cols))
            .rstrip() for line in cells]


def render(d: ProgramDiff, *, side: bool = False, width: int = 160, top: int = 0) -> str:
    out = header("A", d.a) + header("B", d.b)
    if d.a.step_ms is not None and d.b.step_ms is not None:
        change = d.b.step_ms - d.a.step_ms
        rel = f" ({change / d.a.step_ms:+.1%})" if d.a.step_ms else ""
        out.append(f"step GPU time (Triton kernels) {d.a.step_ms:.4f} → {d.b.step_ms:.4f} ms: {change:+.4f} ms{rel}")
        if d.a.other_ms is not None and d.b.other_ms is not None:
            # work can move between Triton and cuBLAS (max_autotune's templates): the whole GPU time says where
            ta, tb = (r.step_ms + r.other_ms / r.steps for r in (d.a, d.b))
            out.append(f"all GPU work the profiler saw, per step {ta:.4f} → {tb:.4f} ms: {tb - ta:+.4f} ms "
                       f"(other work counted from the first Triton launch on, autotuning included)")
    matched = sum(c.matched for c in d.changes)
    gone = sum(c.a is not None and c.b is None for c in d.changes)
    new = sum(c.a is None and c.b is not None for c in d.changes)
    out += ["", f"{len(d.changes)} kernels: {matched} in both runs, {gone} gone, {new} new; "
                f"ranked by GPU time lost per step" + ("" if d.timed else " (neither run was timed: changed "
                                                         "kernels first)")]
    shown = d.changes if not top else d.changes[:top]
    out += table(ProgramDiff(a=d.a, b=d.b, changes=shown))
    if top and len(d.changes) > top:
        out.append(f"  ... {len(d.changes) - top} more (--json has them all)")
    out.append("  Δ/call: ! beyond both runs' p20-p80 spreads, ~ within them, ? too few timed launches; "
               "vec/mat/scalar: machine instructions")
    renamed = [c for c in d.changes if c.how.startswith(("origin", "source"))]
    for c in renamed:
        out.append(f"  {display_name(c.kernel)}: was {c.a.unit.kernel} ({c.how})")
    out += [f"  note: {n}" for n in d.notes]
    if d.story:
        out += ["", d.story]
    p = d.pair
    if p is not None:
        steps = ", ".join(f"{s.stage} {'=' if s.identical else f'≠ {s.changed_lines}'}" for s in p.stages)
        out += ["", f"{p.kernel}: stages after normalization: {steps or 'none in common'}"]
        for diff in (p.first_diff, p.isa):
            if diff is None:
                continue
            what = "first differing stage" if diff is p.first_diff else "machine code"
            out += ["", f"{diff.stage} ({what}): A {diff.a_lines:,} lines vs B {diff.b_lines:,}; changed lines "
                        f"{diff.raw_changed:,} raw, {diff.changed:,} normalized, {diff.shown:,} shown"]
            if diff.identical:
                out.append("  identical after normalization")
            elif side:
                out += side_by_side(diff, "A " + p.a.name, "B " + p.b.name, width=width)
            else:
                out += unified(diff, "A " + (p.a.name or p.a.path), "B " + (p.b.name or p.b.path))
    return "\n".join(out)
