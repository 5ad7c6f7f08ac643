"""What a tune's trials mean: the winner against what the program ran and against the autotuners,
what changed in its code, the finding it fixed, and how to apply it."""

from __future__ import annotations

from dataclasses import dataclass

from kinspect.tune.result import Speedup, Trial, TuneResult, speedup
from kinspect.tune.space import widened

# the code figures a winner is explained by, with their words
CHANGES = (("registers", "registers"), ("spills", "spills"), ("occupancy", "occupancy"),
           ("vector_instructions", "vector instructions"), ("instructions", "instructions"), ("shared_bytes", "shared bytes"))


@dataclass(frozen=True)
class Outcome:
    original: Trial | None
    winner: Trial | None                 # kinspect's fastest correct (the original when nothing beat it)
    speedup: Speedup | None              # winner against the original
    inductor: Trial | None               # the best of Inductor's default configs (its autotuner's pick)
    max_autotune: Trial | None           # the best of max_autotune's configs
    autotune: Trial | None               # the best of the kernel's own @triton.autotune configs
    versus_max_autotune: Speedup | None  # winner against max_autotune's pick
    code: str                            # what changed in the winner's code
    fixed: str                           # the finding it addressed, and whether its code still has it
    apply: str                           # the triton.Config, and for Inductor where to put it
    to_match: int | None = None          # kinspect's trials until one was at most max_autotune's pick's median
    #                                      (0: what the program ran already was; None: none was, or no pick)
    match: Trial | None = None           # that trial (the original's for 0)


@dataclass(frozen=True)
class Tuned:
    """A kernel's tune with what it means (its result and outcome), or why it was not tuned (error)."""

    kernel: str
    result: TuneResult | None = None
    outcome: Outcome | None = None
    error: str = ""


def outcome(r: TuneResult, lookup_key: str | None = None) -> Outcome:
    orig, win = r.original, r.best("kinspect")
    mx, ind = r.best("max_autotune"), r.best("inductor")
    sp = speedup(orig, win) if orig and win else None
    if sp is not None and sp.low <= 1.0 and win is not orig:     # within the spread: not measurably faster
        win, sp = orig, speedup(orig, orig)
    reached = r.trials_to_reach(r.scaled_ms(mx)) if mx is not None and mx.median_ms is not None else None
    return Outcome(original=orig, winner=win, speedup=sp, inductor=ind, max_autotune=mx, autotune=r.best("autotune"),
                   versus_max_autotune=speedup(mx, win, orig) if mx and win else None,
                   code=code_changes(orig, win), fixed=fixed(orig, win, r.trials), apply=apply_line(r, win, lookup_key),
                   to_match=reached[0] if reached else None, match=reached[1] if reached else None)


def match_words(o: Outcome) -> str:
    """How the trial that reached max_autotune's pick's time compares with the pick: the same config, faster
    beyond the timings' spread, or as fast within it (never 'faster' then)."""
    if o.match is None or o.max_autotune is None:
        return ""
    if o.match.candidate.key() == o.max_autotune.candidate.key():
        return "the same config as its pick"
    sp = speedup(o.max_autotune, o.match, o.original)
    if sp is None:
        return ""
    return f"{sp.describe()}, " + ("faster beyond the timings' spread" if sp.low > 1 else
                                   "as fast within the timings' spread, not measurably faster")


def code_changes(orig: Trial | None, win: Trial | None) -> str:
    if orig is None or win is None or win.candidate.key() == orig.candidate.key():
        return ""
    parts = []
    for key, words in CHANGES:
        a, b = getattr(orig.code, key), getattr(win.code, key)
        if a is not None and b is not None and a != b:
            fmt = (lambda x: f"{100 * x:.0f}%") if key == "occupancy" else (lambda x: f"{x:,}")
            parts.append(f"{words} {fmt(a)} -> {fmt(b)}")
    limiter = win.code.occupancy_limiter
    if limiter and limiter != orig.code.occupancy_limiter:
        parts.append(f"occupancy now limited by {limiter}")
    return ", ".join(parts) or "the same registers, occupancy and instruction counts"


def fixed(orig: Trial | None, win: Trial | None, trials: tuple[Trial, ...] = ()) -> str:
    """The finding the winner addressed: the one that proposed it, or for a widening step the candidate it
    widened from, traced through `trials` back to the finding that began the chain."""
    if orig is None or win is None or win.candidate.key() == orig.candidate.key():
        return ""
    why = win.candidate.why
    if why in orig.findings:
        state = "gone from its code" if why not in win.findings else "still reported in its code"
        return f"{why} ({state})"
    gone = [k for k in orig.findings if k not in win.findings]
    w = widened(why)
    if w is not None:
        why = "found by widening from " + lineage(why, trials)
        if w[1] in orig.findings and w[1] in win.findings:
            why += f"; {w[1]} still reported in its code"
    return why + (f"; findings gone from its code: {', '.join(gone)}" if gone else "")


def lineage(why: str, trials: tuple[Trial, ...]) -> str:
    """The candidate a widening step started from, and the ones before it back to the finding whose candidate
    began the chain: `R0_BLOCK=64 XBLOCK=16 w4 s1, itself widened from the spills candidate R0_BLOCK=16 ...`."""
    parts: list[str] = []
    seen: set[str] = set()
    while (w := widened(why)) is not None:
        label, root = w
        if not label:
            parts.append("the best candidate so far (this tune was stored before kinspect named which)")
            break
        base = next((t.candidate for t in trials if t.candidate.label() == label
                     and t.candidate.origin in ("kinspect", "original")), None)
        if base is None or label in seen:     # not among the trials (a store edited by hand), or a loop
            parts.append(f"{label} (a chain begun by {root or 'an unnamed step'})")
            break
        seen.add(label)
        if base.origin == "original":
            parts.append(f"what the program ran ({label})")
            break
        if widened(base.why) is None:
            parts.append(f"the {base.why} candidate {label}")
            break
        parts.append(label)
        why = base.why
    return ", itself widened from ".join(parts)


def apply_line(r: TuneResult, win: Trial | None, lookup_key: str | None) -> str:
    if win is None or win.candidate.origin == "original":
        return ""
    c = win.candidate
    config = (f"triton.Config({dict(c.constexprs)!r}, num_warps={c.num_warps}, num_stages={c.num_stages})")
    if lookup_key is None:
        return f"add {config} to the kernel's @triton.autotune configs (or launch with these values)"
    entry = {**dict(c.constexprs), "num_warps": c.num_warps, "num_stages": c.num_stages}
    return (f"{config}; Inductor regenerates this kernel, so give it the config by its source hash: "
            f"torch._inductor.config.autotune_lookup_table[{lookup_key!r}] = {entry!r} (the key as torch 2.11's "
            f"generate_lookup_hash_from_source_code makes it; Inductor then runs this config alone)")
