"""A tune as text: every candidate with what became of it, then the winner and the comparison."""

from __future__ import annotations

from kinspect.tune.outcome import Outcome, Tuned, match_words
from kinspect.tune.result import Trial, TuneResult
from kinspect.tune.space import short_why


def render(r: TuneResult, o: Outcome) -> str:
    head = (f"tune of {r.kernel} ({r.variant}, {r.target}): {len(r.trials)} candidates in {r.seconds:.0f} s"
            f"{' (' + r.budget + ')' if r.budget else ''}; findings: {', '.join(r.findings) or 'none'}")
    lines = [head, "", f"  {'origin':<12} {'config':<34} {'proposed by':<44} {'µs median (p20-p80)':>22} "
                       f"{'vs ran':>7} {'regs':>5} {'occ':>5}  status"]
    gpus = r.gpus
    if gpus:
        lines[-1] += "  GPU"
    for t in r.trials:
        lines.append(_row(t, r.vs_original(t), gpus))
    lines += [""] + summary(r, o)
    if gpus:
        lines.append(f"timed on {len(gpus)} GPUs, the original config on each; each row's ratio is to the original "
                     f"on its own GPU (its µs are what that GPU measured)")
    lines += [f"note: {n}" for n in r.notes]
    return "\n".join(lines)


def _row(t: Trial, vs_ran: float | None, gpus: list[str]) -> str:
    c = t.candidate
    if t.status == "timed" and t.median_ms is not None:
        us = f"{t.median_ms * 1e3:.1f} ({t.p20_ms * 1e3:.1f}-{t.p80_ms * 1e3:.1f})"
        vs = f"{vs_ran:.2f}x" if vs_ran else "-"
        status = "ok"
    else:
        us, vs, status = "-", "-", f"{t.status}: {t.why}"
    occ = t.code.occupancy
    return (f"  {c.origin:<12} {c.label():<34} {short_why(c.why, 44):<44} {us:>22} {vs:>7} "
            f"{t.code.registers if t.code.registers is not None else '-':>5} "
            f"{f'{100 * occ:.0f}%' if occ is not None else '-':>5}  {status}" +
            (f"  {t.gpu.split(' (')[0] if t.gpu else '-'}" if gpus else ""))


def summary(r: TuneResult, o: Outcome) -> list[str]:
    if o.winner is None:
        return ["no candidate ran correctly: nothing to choose (see the statuses above)"]
    out = []
    if o.winner.candidate.origin == "original":
        out.append(f"winner: what the program ran ({o.winner.candidate.label()}): {kept_original(r)}")
    else:
        out.append(f"winner: {o.winner.candidate.label()}: {o.speedup.describe() if o.speedup else '?'} against what "
                   f"the program ran ({o.winner.candidate.changes(o.original.candidate) if o.original else ''})")
        out.append(f"  its code: {o.code}")
        out.append(f"  finding: {o.fixed}")
        out.append(f"  apply: {o.apply}")
    for label, t, origin in (("Inductor's own configs (its autotuner)", o.inductor, "inductor"),
                             ("max_autotune's configs", o.max_autotune, "max_autotune"),
                             ("the kernel's @triton.autotune configs (Triton's autotuner)", o.autotune, "autotune")):
        n = sum(1 for x in r.trials if x.candidate.origin == origin)
        if not n:
            continue
        if t is None:
            out.append(f"{label}: {n} config(s), none ran correctly")
            continue
        vs = r.vs_original(t)
        out.append(f"{label}: {n} config(s), {r.trials_of(origin)} run; picks {t.candidate.label()}"
                   f"{f' at {vs:.2f}x of what the program ran' if vs else ''}")
    if o.versus_max_autotune is not None:
        out.append(f"kinspect's winner against max_autotune's pick: {o.versus_max_autotune.describe()}, in "
                   f"{r.trials_of('kinspect')} trials against its {r.trials_of('max_autotune')}"
                   + (f" (Inductor heuristics of torch {r.torch})" if r.torch else ""))
        out.append(reached(r, o))
    return out


def reached(r: TuneResult, o: Outcome) -> str:
    """When kinspect first had a result at least as fast as max_autotune's pick, in trials."""
    n, m = r.trials_of("kinspect"), r.trials_of("max_autotune")
    if o.to_match is None:
        return f"kinspect did not reach max_autotune's pick's time in its {n} trials (max_autotune times {m})"
    if o.to_match == 0:
        return (f"what the program ran already reaches max_autotune's pick's time ({match_words(o)}): 0 of kinspect's "
                f"{n} trials needed (max_autotune times {m})")
    return (f"kinspect reached max_autotune's pick's time after {o.to_match} of its {n} trials "
            f"(max_autotune times {m}): {o.match.candidate.label()}, {match_words(o)}")


def table_row(r: TuneResult, o: Outcome) -> dict:
    """One row of the tune table of a program (the benchmark prints these)."""
    us = lambda t: None if t is None or t.median_ms is None else round(t.median_ms * 1e3, 2)   # noqa: E731
    return {"kernel": r.kernel, "original_us": us(o.original), "winner": o.winner.candidate.label() if o.winner else None,
            "winner_us": us(o.winner), "kinspect_trials": r.trials_of("kinspect"),
            "kinspect_trials_to_match": o.to_match, "match": match_words(o) or None,
            "max_autotune": o.max_autotune.candidate.label() if o.max_autotune else None,
            "max_autotune_us": us(o.max_autotune), "max_autotune_trials": r.trials_of("max_autotune"),
            "autotune": o.autotune.candidate.label() if o.autotune else None, "autotune_us": us(o.autotune),
            "autotune_trials": r.trials_of("autotune"), "speedup": o.speedup.describe() if o.speedup else None,
            "vs_max_autotune": o.versus_max_autotune.describe() if o.versus_max_autotune else None,
            "reason": _reason(r, o)}


def _reason(r: TuneResult, o: Outcome) -> str:
    """Why the row reads as it does; never 'the program's config was the fastest' when nothing ran."""
    if o.original is None or o.original.median_ms is None:
        why = o.original.why if o.original is not None else "not tried"
        return f"the program's config could not be replayed, so nothing was compared ({why})"
    if o.winner is None:
        return "no candidate ran correctly: nothing to choose"
    if o.winner.candidate.origin != "original":
        return "; ".join(x for x in (o.fixed, o.code) if x)
    return "kept what the program ran: " + kept_original(r)


def kept_original(r: TuneResult) -> str:
    """Why what the program ran stays the winner, from what became of kinspect's candidates: none was
    measurably faster, or none could be compared (wrong, failed, pruned: counted, never 'fastest')."""
    mine = [t for t in r.trials if t.candidate.origin == "kinspect"]
    timed = [t for t in mine if t.status == "timed"]
    if not timed:
        counts = ", ".join(f"{sum(1 for t in mine if t.status == s)} {s}" for s in ("wrong", "failed", "pruned")
                           if any(t.status == s for t in mine))
        first = next((t.why for t in mine if t.status != "timed"), "")
        return (f"none of kinspect's {len(mine)} candidate(s) ran correctly "
                f"({counts or 'none tried'}{'; first: ' + first[:120] if first else ''})")
    fastest = min(timed, key=r.scaled_ms)
    ratio = r.vs_original(fastest)
    at = "" if ratio is None else f" at {ratio:.2f}x" + (", within the timings' spread" if ratio > 1 else "")
    return f"none of {len(timed)} timed candidate(s) measurably faster (the fastest: {fastest.candidate.label()}{at})"


def section(tunes: list[Tuned]) -> str:
    """The tunes of vec-report --tune, each in full, or why it was not tuned."""
    return "\n\n".join(render(t.result, t.outcome) if t.result is not None else f"tune of {t.kernel}: not tuned: "
                        f"{t.error}" for t in tunes)


def stored(t: Tuned) -> str:
    """The tune stored beside a variant, in a few lines (under its vec-report)."""
    return (f"\n  tuned ({len(t.result.trials)} candidates, {t.result.budget or 'no limit'}):\n" +
            "\n".join(f"    {line}" for line in summary(t.result, t.outcome)))
