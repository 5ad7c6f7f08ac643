"""What a tune's trials mean: the winner against what the program ran and against the autotuners,
what changed in its code, the finding it fixed, and how to apply it."""

from __future__ import annotations

from dataclasses import dataclass

from kinspect.tune.result import Speedup, Trial, TuneResult, speedup

# the code figures a winner is explained by, with their words
CHANGES = (("registers", "registers"), ("spills", "spills"), ("occupancy", "occupancy"),
           ("vector", "vector instructions"), ("instructions", "instructions"), ("shared_bytes", "shared bytes"))


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


def outcome(r: TuneResult, lookup_key: str | None = None) -> Outcome:
    orig, win = r.original, r.best("kinspect")
    mx, ind = r.best("max_autotune"), r.best("inductor")
    sp = speedup(orig, win) if orig and win else None
    if sp is not None and sp.low <= 1.0 and win is not orig:     # within the spread: not measurably faster
        win, sp = orig, speedup(orig, orig)
    return Outcome(original=orig, winner=win, speedup=sp, inductor=ind, max_autotune=mx, autotune=r.best("autotune"),
                   versus_max_autotune=speedup(mx, win) if mx and win else None,
                   code=code_changes(orig, win), fixed=fixed(orig, win), apply=apply_line(r, win, lookup_key))


def code_changes(orig: Trial | None, win: Trial | None) -> str:
    if orig is None or win is None or win.candidate.key() == orig.candidate.key():
        return ""
    parts = []
    for key, words in CHANGES:
        a, b = orig.code.get(key), win.code.get(key)
        if a is not None and b is not None and a != b:
            fmt = (lambda x: f"{100 * x:.0f}%") if key == "occupancy" else (lambda x: f"{x:,}")
            parts.append(f"{words} {fmt(a)} -> {fmt(b)}")
    limiter = win.code.get("occupancy_limiter")
    if limiter and limiter != orig.code.get("occupancy_limiter"):
        parts.append(f"occupancy now limited by {limiter}")
    return ", ".join(parts) or "the same registers, occupancy and instruction counts"


def fixed(orig: Trial | None, win: Trial | None) -> str:
    if orig is None or win is None or win.candidate.key() == orig.candidate.key():
        return ""
    why = win.candidate.why
    if why in orig.findings:
        state = "gone from its code" if why not in win.findings else "still reported in its code"
        return f"{why} ({state})"
    gone = [k for k in orig.findings if k not in win.findings]
    if why == "widening":
        why = "none named this step: found by widening from the best so far"
    return why + (f"; findings gone from its code: {', '.join(gone)}" if gone else "")


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
