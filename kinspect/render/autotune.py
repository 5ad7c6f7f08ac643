"""triton.autotune's decisions, as the capture summary shows them."""

from __future__ import annotations

from kinspect.core.model import AutotuneDecision, TunedConfig

SHOWN_CONFIGS = 8        # per decision; the rest are counted


def config_text(c: TunedConfig) -> str:
    """`BLOCK=64; num_warps=2, num_stages=3` (num_ctas=1, the default, left out)."""
    values = ", ".join(f"{k}={v}" for k, v in c.kwargs.items())
    options = ", ".join(f"{k}={v}" for k, v in c.options.items() if not (k == "num_ctas" and v == 1))
    return "; ".join(p for p in (values, options) if p) or "(no values)"


def key_text(d: AutotuneDecision) -> str:
    """`n=777 (float32, float32, float32)`: the key= arguments by name, then the dtypes the
    autotuner adds to its key."""
    named = [f"{n}={v}" for n, v in zip(d.key_names, d.key)]
    rest = [str(v).removeprefix("torch.") for v in d.key[len(d.key_names):]]
    return " ".join(named) + (f" ({', '.join(dict.fromkeys(rest))})" if rest else "")


def decision_lines(decisions, interpret: str | None = None) -> list[str]:
    out = []
    for d in decisions:
        head = f"  autotuned {d.kernel} [{key_text(d)}]: "
        if d.how == "interpreter":
            where = f" and compiled for {interpret}" if interpret else ""
            out.append(head + f"took {config_text(d.best)}, the first of {len(d.timings) or d.configs} config(s): "
                              f"under the interpreter the autotuner times nothing; each config was recorded{where}")
            continue
        if d.how == "single":
            out.append(head + f"{config_text(d.best)}, the one config left after pruning (nothing benchmarked)")
            continue
        how = f"benchmarked in {d.bench_s:.2f} s" if d.how == "benchmarked" and d.bench_s is not None else \
            "from Triton's autotune cache" if d.how == "cache" else d.how
        out.append(head + f"chose {config_text(d.best)} ({how}, {len(d.timings)} config(s))")
        ranked = sorted(d.timings, key=lambda t: (t.failed or not t.ms, t.ms[0] if t.ms else 0.0))
        for t in ranked[:SHOWN_CONFIGS]:
            if t.failed:
                figure = "failed (did not compile, or out of resources)"
            elif not t.ms:
                figure = "not timed"
            else:
                figure = f"{t.ms[0]:.4f} ms" + (f" (p20 {t.ms[1]:.4f}, p80 {t.ms[2]:.4f})" if len(t.ms) >= 3 else "")
            mark = "  <- chosen" if t.config == d.best else ""
            out.append(f"      {config_text(t.config):<48} {figure}{mark}")
        if len(ranked) > SHOWN_CONFIGS:
            out.append(f"      ... and {len(ranked) - SHOWN_CONFIGS} more (kinspect capture --json has them all)")
    return out
