"""Terminal output: the dump summary, variant tables, highlighted stages."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from kinspect.core.model import Variant
from kinspect.files.captured import CaptureResult
from kinspect.render.table import aligned


# What a terminal acts on instead of showing: C0 and C1 controls (ESC starts sequences that move the
# cursor, clear the screen or retitle the window; CSI is ESC [ in one byte), DEL, the bidirectional
# overrides and isolates (they reorder what is shown), the line and paragraph separators, and path
# bytes that are not UTF-8 in the C1 range (decoded as lone surrogates, printed back as those bytes).
_WIDE = "\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\udc80-\udc9f"
_ANY_CONTROL = re.compile("[\x00-\x1f" + _WIDE + "]")
# in text shown as lines: newlines, tabs and the CR of a CRLF line end are kept
_LINE_CONTROL = re.compile("\r(?!\n)|[\x00-\x08\x0b\x0c\x0e-\x1f" + _WIDE + "]")


def clean(text: str, *, lines: bool = False) -> str:
    """`text` with every control character shown as an escape (`\\x1b`) instead of acted on: data
    from a store (a kernel name, a note, a stage) is shown, never run by the terminal. With `lines`,
    newlines and tabs are kept (text shown as lines); without, they are escaped too (a field)."""
    return (_LINE_CONTROL if lines else _ANY_CONTROL).sub(_escape, text)


def _escape(m: re.Match) -> str:
    code = ord(m.group())
    if 0xdc80 <= code <= 0xdcff:          # a byte that was not UTF-8 (os.fsdecode's surrogateescape)
        return f"\\x{code - 0xdc00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def use_color(stream=None) -> bool:
    stream = stream or sys.stdout
    return "NO_COLOR" not in os.environ and hasattr(stream, "isatty") and stream.isatty()


# a vec-report's verdict lines by their mark, and its other lines: how a terminal shows them
_VERDICT_STYLE = {"+": dict(fg="green"), "!": dict(fg="red", bold=True), "-": dict(fg="yellow")}


def paint_report(text: str) -> str:
    """vec-report's text (already cleaned of the data's control characters) with colour for a terminal:
    each variant's head line bold, verdicts by their mark (+ good, ! a problem, - worth knowing), the
    `try:` advice and notes dim. Only kinspect's own escape sequences are added."""
    import click

    out = []
    for line in text.split("\n"):
        stripped = line.lstrip()
        if line and not line[0].isspace() and "  " in line:          # `kernel  target  variant`
            line = click.style(line, bold=True)
        elif line.startswith("    ") and stripped[:2] in ("+ ", "! ", "- "):
            line = line[:len(line) - len(stripped)] + click.style(stripped, **_VERDICT_STYLE[stripped[0]])
        elif stripped.startswith(("try: ", "note: ", "assumed ")):
            line = click.style(line, dim=True)
        out.append(line)
    return "\n".join(out)


def highlight(text: str, dialect: str, color: bool) -> str:
    if not color:
        return text
    from pygments import highlight as pyg_highlight
    from pygments.formatters import TerminalFormatter

    try:
        from kinspect.render.lexers import lexer_for
        lexer = lexer_for(dialect)
    except ImportError:
        from pygments.lexers import TextLexer
        lexer = TextLexer()
    return pyg_highlight(text, lexer, TerminalFormatter())


def human_bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def ms(us: int | None) -> str:
    return "" if us is None else f"{us / 1000:,.1f}"


def _stage_times(v: Variant) -> dict[str, int]:
    if v.times is None:
        return {}
    times = dict(v.times.stages)
    times["source"] = v.times.ir_initialization_us  # building the IR from the AST
    return times


def spec_line(v: Variant) -> str:
    consts = ", ".join(f"{k}={val}" for k, val in v.constexprs.items())
    opts = ", ".join(f"{k}={v.options[k]}" for k in ("num_warps", "num_stages") if k in v.options)
    return "; ".join(p for p in (consts, opts) if p) or "-"


def spec_lines(variants: list[Variant]) -> list[str]:
    """spec_line of each variant, with what tells apart variants of one kernel that share it (the
    JIT's specialization: an unaligned pointer, an argument's type): `BLOCK=64; num_warps=4 (x_ptr unaligned)`."""
    lines = [spec_line(v) for v in variants]
    groups = {}
    for i, v in enumerate(variants):
        groups.setdefault((v.kernel, str(v.target), lines[i]), []).append(i)
    out = list(lines)
    for members in (m for m in groups.values() if len(m) > 1):
        facets = [variants[i].specialization() for i in members]
        keys = list(dict.fromkeys(k for f in facets for k in f))
        varying = [k for k in keys if len({f.get(k) for f in facets}) > 1]
        for i, f in zip(members, facets):
            shown = [f[k] for k in varying if k in f]
            if shown:
                out[i] = f"{lines[i]} ({', '.join(shown)})"
    return out


def relative(path: str) -> str:
    """Relative to the working directory when below it, else absolute."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def _line_count(v: Variant, s) -> int | None:
    if s.binary:
        return None
    if s.lines is not None:
        return s.lines
    try:
        from kinspect.core.errors import KinspectError
        from kinspect.files import foreign

        with foreign.open_binary(Path(v.path, s.file)) as f:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))
    except (OSError, KinspectError):
        return None


def summary(v: Variant, *, label: str, target_note: str) -> str:
    src = f"{relative(v.source.file)}:{v.source.line}" if v.source else "source unknown"
    out = [
        f"kernel   {label}  ({v.kernel}, {src})",
        f"variant  {v.name}",
        f"target   {target_note}",
        f"spec     {spec_line(v)}",
        *user_lines(v),
        f"stored   {relative(v.path)}/",
        "",
        f"  {'stage':<8} {'lines':>7} {'size':>10} {'JIT ms':>9}  file",
    ]
    times = _stage_times(v)
    for s in v.stages:
        lines = _line_count(v, s)
        jit = ms(times.get(s.name)) if s.name in times else ("" if not s.derived_by else "-")
        how = f"  ({s.derived_by})" if s.derived_by else ""
        out.append(f"  {s.name:<8} {'-' if lines is None else lines:>7} {human_bytes(s.bytes):>10} {jit:>9}  "
                   f"{s.file}{how}")
    if v.times is not None:
        hit = "cache hit" if v.cache_hit else "compiled"
        out.append(f"\n  JIT total {ms(v.times.total_us)} ms ({hit}; IR from AST {ms(v.times.ir_initialization_us)} ms, "
                   f"storing {ms(v.times.store_results_us)} ms)")
        if v.times.startup_us:
            out.append(f"  + Triton start-up {ms(v.times.startup_us)} ms (once per process: Triton hashing its own "
                       f"sources for the cache key; not this kernel's)")
    loaded = v.loaded
    if loaded:
        out.append(f"  loaded on the device: {loaded.registers} registers, {loaded.spills} spills")
    out += [f"  note: {clean(n)}" for n in v.notes]
    return "\n".join(out)


def user_lines(v: Variant) -> list[str]:
    """For a kernel from the user's file: its autotune config, its heuristics, how it was loaded."""
    user = v.user
    out: list[str] = []
    if user is None:
        return out
    tuning = user.autotune
    if tuning is not None and tuning.config is not None:
        out.append(f"autotuned: config {tuning.config.index} of {tuning.configs}  {tuning.config.text}")
    if tuning is not None and tuning.key:
        out.append(f"         autotune key: {', '.join(f'{k}={x}' for k, x in tuning.key.items())}")
    if tuning is not None and tuning.heuristics:
        out.append(f"heuristics {', '.join(f'{k}={x}' for k, x in tuning.heuristics.items())}")
    out += [f"         note: {n}" for n in (tuning.notes if tuning is not None else ())]
    if user.loaded:
        out.append(f"loaded   {user.loaded}")
    if user.launch:
        out.append(f"launch   {user.launch}")
    assumed = [a.text for a in user.assumed]
    for i, line in enumerate(assumed):
        out.append(f"{'assumed' if i == 0 else '':<8} {line}")
    if assumed:
        out.append(f"{'':<8} (guesses: set your own with --arg/-p or --from, or declare kinspect_examples in "
                   f"the file)")
    return out


def variants_table(variants: list[Variant]) -> str:
    if not variants:
        return "  (no variants)"
    rows = [("#", "kernel", "target", "spec", "stages", "folder")]
    for i, (v, spec) in enumerate(zip(variants, spec_lines(variants)), 1):
        rows.append((str(i), v.kernel, str(v.target), spec, ",".join(s.name for s in v.stages if s.name != "json"),
                     v.name))
    return "\n".join(aligned(rows, free_last=True))


def passes_table(p, top: int = 12) -> str:
    """MLIR pass timing of `kinspect dump --passes` (kinspect.compile.passes.Passes)."""
    total = sum(p.pipelines)
    out = [f"  MLIR passes: {len(p.pipelines)} pipelines, {total:,.1f} ms "
           f"({', '.join(f'{ms:,.1f}' for ms in p.pipelines)} ms); {len(p.passes)} distinct passes"]
    if p.passes:
        out.append(f"  {'pass':<48} {'ms':>8} {'runs':>5}")
        out += [f"  {t.name[:48]:<48} {t.ms:>8,.2f} {t.runs:>5}" for t in p.passes[:top]]
        if len(p.passes) > top:
            rest = sum(t.ms for t in p.passes[top:])
            out.append(f"  {f'... {len(p.passes) - top} more':<48} {rest:>8,.2f}")
    out.append(f"  IR snapshots: {p.snapshots} (one before each pass run); {len(p.changed)} changed the IR, "
               f"kept in {relative(p.folder)}/")
    out += [f"  note: {n}" for n in p.notes]
    return "\n".join(out)


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def capture_summary(result: CaptureResult, out_dir) -> str:
    """What `kinspect capture` recorded: the variants, and per variant its launches and GPU time
    (busiest first), with what recording and timing cost."""
    variants = result.variants
    launched = [v for v in variants if v.launches is not None]
    tuning = sum(v.launches.tuning_calls for v in launched)
    interpret = result.interpret
    head = f"kinspect: {len(variants)} variant(s) recorded in {out_dir}"
    if interpret:
        head = f"kinspect: {len(variants)} variant(s) compiled for {interpret} in {out_dir}"
    if result.interrupted:
        head = f"kinspect: interrupted after the program: {len(variants)} variant(s) finished and kept in {out_dir}"
    if result.launches:
        procs = {(p.host, p.pid) for v in launched for p in v.launches.processes}
        kind = "interpreted launch(es)" if interpret else "launch(es)"
        head += f"; {result.launches:,} {kind} in {len(procs) or 1} process(es)"
    out = [head]
    if not launched:
        if variants:
            out.append(variants_table(variants))
    else:
        timed = sum(v.launches.gpu.total_ms for v in launched if v.launches.gpu)
        ranked = sorted(variants, key=lambda v: (-(v.launches.gpu.total_ms if v.launches and v.launches.gpu else 0),
                                                 -(v.launches.calls if v.launches else 0), v.kernel))
        gpu_columns = not interpret     # interpreted launches ran on no GPU
        rows = [("kernel", "spec", "calls") + (("GPU ms", "median ms", "share") if gpu_columns else ()) +
                (("tuning",) if tuning else ())]
        for v, spec in zip(ranked, spec_lines(ranked)):
            la = v.launches
            gpu = la.gpu if la else None
            row = (_cut(v.kernel, 48), _cut(spec, 60), f"{la.calls:,}" if la else "0")
            if gpu_columns:
                row += (f"{gpu.total_ms:,.3f}" if gpu else "-",
                        f"{gpu.median_ms:.4f}" if gpu and gpu.median_ms is not None else "-",
                        f"{100 * gpu.total_ms / timed:.1f}%" if gpu and timed else "-")
            if tuning:
                row += (f"{la.tuning_calls:,}" if la and la.tuning_calls else "-",)
            rows.append(row)
        out += aligned(rows, "<<" + ">" * (len(rows[0]) - 2))
    if result.autotune:
        from kinspect.render.autotune import decision_lines

        out += decision_lines(result.autotune, interpret)
    if result.launches and interpret:
        out.append(f"  recording the interpreted launches cost {result.hook_ms:,.1f} ms (their specialization for "
                   f"{interpret} included); compiling them {result.compile_s:.1f} s after the program ended")
    elif result.launches or tuning:
        how = result.observed
        if how:
            out.append("  launches observed per compiled kernel, no launch hook set: "
                       + "; ".join(f"{n} variant(s) through {k}" for k, n in sorted(how.items())))
        if result.static_launcher:
            out.append(f"  Inductor's static launcher: {result.static_launcher}, left as the program had it")
        per = result.per_launch_us
        out.append(f"  recording launches cost {result.hook_ms:,.1f} ms: {per:.2f} µs per launch (the observer's "
                   f"wrapper, measured in the program's process) plus first launches, new signatures and writes")
    if tuning:
        tuning_ms = sum(v.launches.tuning_ms for v in launched)
        gpu = f" ({tuning_ms:,.3f} ms on the GPU)" if tuning_ms else ""
        out.append(f"  tuning: {tuning:,} launch(es) while autotuners benchmarked configs{gpu}: not in calls, GPU ms "
                   f"or share")
    t = result.timing
    if t:
        if t.failed:
            out.append(f"  GPU time: not measured: {t.method} could not start ({t.failed}); "
                       f"try --time events")
        else:
            cover = f"; timed: {t.coverage}" if t.coverage else ""
            out.append(f"  GPU time: {t.method}{cover}; timing cost {t.ms:,.1f} ms on the CPU side "
                       f"(benchmarks/capture_overhead.py measures its cost per launch)")
    if result.unattributed:
        n = sum(result.unattributed.values())
        out.append(f"  {n:,} launch(es) of kernels not recorded in the store (see the warnings above): "
                   f"{', '.join(sorted(result.unattributed)[:4])}")
    out += [f"  note: {n}" for n in result.notes]
    if result.derive_s > 0.5:
        out.append(f"  derived stages and merged launch records in {result.derive_s:.1f} s after the program ended")
    return "\n".join(out)
