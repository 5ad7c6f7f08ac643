"""triton.autotune's decisions: which config won for which key, and the timings it chose by.

Triton 3.9 calls `knobs.autotuning.listener` after tuning a key; Triton 3.6 has no such listener,
and under TRITON_INTERPRET 3.9's call fails itself (it looks for a JITFunction under the
autotuner, and the interpreter has none). So kinspect wraps `Autotuner.run` instead, in both
versions and modes: after each call it looks at what the autotuner added to its own `cache`
(key -> chosen Config) and `configs_timings` (Config -> do_bench's [median, p20, p80] ms), the
attributes both versions keep. Work per launch: a length check of that dict.

Under the interpreter nothing can be timed (no device), and Triton's own benchmark fails without
a driver. There `_bench` is replaced too: each config is handed to the interpreted launch once as
a trial (kinspect.program.interpreted_launches records and compiles it for the target, and runs nothing) and
gets no time, so the autotuner keeps its first config; the decision says so (how="interpreter").
"""

from __future__ import annotations

import math
import os
import socket
import sys
from pathlib import Path

from kinspect.core.model import AutotuneDecision, ConfigTiming, TunedConfig
from kinspect.core.patching import Patches


class AutotuneRecorder:
    def __init__(self, root: str | Path | None, *, interpret: bool = False):
        self.root = Path(root) if root is not None else None
        self.interpret = interpret
        self.decisions: list[AutotuneDecision] = []
        self._saved = None

    def install(self) -> None:
        from triton.runtime.autotuner import Autotuner

        original_run = Autotuner.run
        recorder = self

        def run(tuner, *args, **kwargs):
            before = (len(tuner.cache), getattr(tuner, "configs_timings", None), getattr(tuner, "bench_time", None))
            try:
                return original_run(tuner, *args, **kwargs)
            finally:
                if len(tuner.cache) > before[0]:
                    try:
                        recorder.decided(tuner, *before)
                    except Exception as e:   # never break the program for a record
                        print(f"kinspect: could not record an autotuning decision: {e}", file=sys.stderr)

        patches = self._saved = Patches()
        patches.attr(Autotuner, "run", run)
        if self.interpret:
            patches.attr(Autotuner, "_bench", _trial_bench)

    def restore(self) -> None:
        if self._saved is not None:
            self._saved.close()
            self._saved = None

    def decided(self, tuner, cached: int, timings_before, bench_before) -> None:
        timings = getattr(tuner, "configs_timings", None)
        fresh = timings is not None and timings is not timings_before
        bench = getattr(tuner, "bench_time", None)
        if self.interpret:
            how = "interpreter"
        elif fresh:
            how = "benchmarked" if bench is not bench_before else "cache"
        else:
            how = "single"
        kernel = _kernel_name(tuner)
        from kinspect.hooks.launch_counts import rank

        for key in list(tuner.cache)[cached:]:
            self.decisions.append(AutotuneDecision(
                kernel=kernel, key=tuple(_plain(k) for k in key), key_names=tuple(getattr(tuner, "keys", ()) or ()),
                best=tuned(tuner.cache[key]),
                timings=tuple(_timing(c, t) for c, t in timings.items()) if fresh else (),
                how=how, bench_s=float(bench) if how == "benchmarked" and bench is not None else None,
                configs=len(getattr(tuner, "configs", ()) or ()), pid=os.getpid(), rank=rank(),
                host=socket.gethostname()))
        self.write(kernel)

    def write(self, kernel: str) -> None:
        if self.root is None:
            return
        from kinspect.files.store import write_autotune

        try:
            write_autotune(self.root, kernel, [d for d in self.decisions if d.kernel == kernel],
                           host=socket.gethostname(), pid=os.getpid())
        except OSError as e:
            print(f"kinspect: could not write an autotuning decision: {e}", file=sys.stderr)

    def forget(self) -> None:
        """A forked child records its own decisions (its parent's are written already)."""
        self.decisions.clear()


def _trial_bench(tuner, *args, config, **meta):
    """Autotuner._bench under the interpreter: the config's launch goes to the interpreted-launch
    hook as a trial (recorded and compiled for the target, not run); nothing is timed."""
    from kinspect.hooks.tuning import trial

    conflicts = meta.keys() & config.kwargs.keys()
    if conflicts:     # as Triton's own _bench says it
        raise ValueError(f"Conflicting meta-parameters: {', '.join(conflicts)}."
                         " Make sure that you don't re-define auto-tuned symbols.")
    with trial():
        tuner.fn.run(*args, **dict(meta, **config.all_kwargs()))
    return [math.nan, math.nan, math.nan]


def _kernel_name(tuner) -> str:
    base = getattr(tuner, "base_fn", None) or getattr(tuner, "fn", None)
    return str(getattr(base, "__name__", "kernel"))


def tuned(config) -> TunedConfig:
    kwargs = dict(getattr(config, "kwargs", {}) or {})
    everything = config.all_kwargs() if hasattr(config, "all_kwargs") else kwargs
    return TunedConfig(kwargs={k: _plain(v) for k, v in kwargs.items()},
                       options={k: _plain(v) for k, v in everything.items() if k not in kwargs and v is not None})


def _timing(config, value) -> ConfigTiming:
    figures = value if isinstance(value, (list, tuple)) else [value]
    try:
        ms = tuple(float(x) for x in figures)
    except (TypeError, ValueError):
        ms = ()
    if any(math.isinf(x) for x in ms):
        return ConfigTiming(tuned(config), (), failed=True)
    return ConfigTiming(tuned(config), tuple(x for x in ms if not math.isnan(x)))


def _plain(value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)
