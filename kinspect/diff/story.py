"""A kernel's change between two runs in words: one paragraph made only of the diff's own figures.

    "triton_poi_fused_add_3 (matched by name and source): time per call 2.30 → 3.10 µs (+35%, beyond both
    runs' spreads), 24 calls a step, 0.019 ms lost per step (61% of the step's change). Registers 64 → 128,
    occupancy 50% → 25%, spills 0 → 87. XBLOCK 512 → 1024. New finding: register spills. The TTIR is
    identical; the TTGIR is the first stage that differs (12 normalized lines), the SASS differs in 80."

Every clause is left out when its figure is missing or unchanged: the paragraph never says what the
data does not show.
"""

from __future__ import annotations

from kinspect.analysis.findings import KINDS


def story(c, pair, run_a, run_b) -> str:
    """`c` a kinspect.diff.programs.KernelChange, `pair` its PairDiff (or None), the two Runs."""
    parts = [f"{c.kernel} ({_how(c.how)}):"]
    timing = _timing(c, run_a, run_b)
    if timing:
        parts.append(timing + ".")
    elif run_a.steps_from == "one compile":
        parts.append("compiled offline, so only the code is compared.")
    else:
        parts.append("neither run timed its launches (kinspect capture --time), so only the code is compared.")
    figures = _figures(c)
    if figures:
        parts.append(_sentence(figures))
    if c.config:
        parts.append(_sentence(list(c.config)))
    findings = []
    if c.appeared:
        findings.append("new finding" + ("s" if len(c.appeared) > 1 else "") + ": " + ", ".join(_title(k) for k in c.appeared))
    if c.vanished:
        findings.append("gone: " + ", ".join(_title(k) for k in c.vanished))
    if findings:
        parts.append(_sentence(findings))
    if pair is not None:
        parts.append(_stages(pair))
    return " ".join(p for p in parts if p)


def _how(how: str) -> str:
    return "matched by " + how if how not in ("gone", "new") else how


def _timing(c, run_a, run_b) -> str:
    a, b = c.a.timing, c.b.timing
    bits = []
    if a.us is not None and b.us is not None:
        change = f"{c.per_call_change:+.0%}" if c.per_call_change is not None else ""
        spread = {True: "beyond both runs' spreads", False: "within the runs' spreads",
                  None: "too few timed launches to tell it from noise"}[c.beyond_spread]
        bits.append(f"time per call {_us(a.us)} → {_us(b.us)} µs ({change}, {spread})")
    if a.calls is not None and b.calls is not None:
        per_a, per_b = a.calls / run_a.steps, b.calls / run_b.steps
        per = "run" if run_a.steps == run_b.steps == 1 else "step"
        bits.append(f"calls per {per} {_n(per_a)} → {_n(per_b)}" if per_a != per_b
                    else f"{_n(per_b)} call{'s' if per_b != 1 else ''} per {per}")
    if c.lost_ms_per_step is not None:
        total = None if run_a.step_ms is None or run_b.step_ms is None else run_b.step_ms - run_a.step_ms
        word = "lost" if c.lost_ms_per_step >= 0 else "saved"
        share = ""
        if total and abs(total) > 1e-12 and (total > 0) == (c.lost_ms_per_step > 0):
            share = f" ({c.lost_ms_per_step / total:.0%} of the step's change)"
        bits.append(f"{abs(c.lost_ms_per_step):.4f} ms {word} per step{share}")
    return ", ".join(bits)


def _figures(c) -> list[str]:
    ma, mb = c.a.figures, c.b.figures
    out = []
    if ma.registers is not None and mb.registers is not None and ma.registers != mb.registers:
        out.append(f"registers {ma.registers} → {mb.registers}")
    if ma.occupancy is not None and mb.occupancy is not None and ma.occupancy != mb.occupancy:
        out.append(f"occupancy {ma.occupancy:.0%} → {mb.occupancy:.0%}")
    if ma.spills is not None and mb.spills is not None and ma.spills != mb.spills:
        out.append(f"spills {ma.spills} → {mb.spills}")
    if ma.shared_bytes is not None and mb.shared_bytes is not None and ma.shared_bytes != mb.shared_bytes:
        out.append(f"shared memory {ma.shared_bytes:,} → {mb.shared_bytes:,} bytes")
    for name, x, y in (("instructions", ma.instructions, mb.instructions), ("vector", ma.vector, mb.vector),
                       ("matrix", ma.matrix, mb.matrix)):
        if x != y:
            out.append(f"{name} {x} → {y}")
    return out


def _stages(pair) -> str:
    if not pair.stages:
        return "The two variants share no text stage to compare."
    if pair.first is None:
        return f"Every stage both runs kept ({', '.join(s.stage for s in pair.stages)}) is identical after normalization."
    names = [s.stage for s in pair.stages]
    before = [s.title or s.stage for s in pair.stages[:names.index(pair.first)]]
    first = pair.stages[names.index(pair.first)]
    text = f"The {_list(before)} {'is' if len(before) == 1 else 'are'} identical; the " if before else "The "
    text += f"{first.title or first.stage} is the first stage that differs ({first.changed_lines} normalized lines)"
    isa = next((s for s in pair.stages if pair.isa is not None and s.stage == pair.isa.stage), None)
    if isa is not None and isa.stage != pair.first:
        text += f", the {isa.title or isa.stage} " + (f"differs in {isa.changed_lines}" if not isa.identical
                                                       else "is identical again")
    return text + "."


def _list(xs: list[str]) -> str:
    return xs[0] if len(xs) == 1 else ", ".join(xs[:-1]) + " and " + xs[-1]


def _sentence(items: list[str]) -> str:
    text = ", ".join(items)
    return text[:1].upper() + text[1:] + "."


def _title(kind: str) -> str:
    k = KINDS.get(kind)
    return k.title if k is not None else kind


def _us(x: float) -> str:
    return f"{x:.2f}" if x < 100 else f"{x:,.0f}"


def _n(x: float) -> str:
    return f"{x:g}" if x == int(x) else f"{x:.1f}"
