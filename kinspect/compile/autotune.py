"""What `@triton.autotune` and `@triton.heuristics` do to a kernel at launch, done without launching.

A kernel as its file defines it is a chain of wrappers around a JITFunction, outermost first:
an Autotuner picks one of its configs (after `prune_configs_by`), runs the config's pre_hook and
passes the config's values on; a Heuristics computes its values from the arguments it is given.
`apply` walks the chain as Triton's `run` methods do, with the example arguments, so a variant
is compiled with the constexprs Triton would compile it with, and with the config chosen by
number rather than by benchmarking.

Configs are numbered as the author wrote them (`Autotuner.configs`), whatever pruning keeps.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kinspect.core.errors import KinspectError, UsageError

# Config fields that are compile options, not constexprs (triton.Config.all_kwargs)
OPTION_FIELDS = ("num_warps", "num_stages", "num_ctas", "maxnreg", "ir_override")


@dataclass(frozen=True)
class TuneConfig:
    """One autotune config, as plain values."""

    index: int
    kwargs: dict
    options: dict        # num_warps and num_stages, and num_ctas / maxnreg / ir_override when set
    pre_hook: str = ""   # the hook's name, when the config has one

    def describe(self) -> str:
        """The config as its author wrote it: `BLOCK_M=128 BLOCK_N=64 num_warps=8 num_stages=3`."""
        parts = [f"{k}={v}" for k, v in self.kwargs.items()] + [f"{k}={v}" for k, v in self.options.items()]
        if self.pre_hook:
            parts.append(f"pre_hook={self.pre_hook}")
        return " ".join(parts)

    def to_json(self) -> dict:
        return {"index": self.index, "kwargs": _plain(self.kwargs), "options": _plain(self.options),
                "pre_hook": self.pre_hook or None, "text": self.describe()}


def config_of(index: int, c) -> TuneConfig:
    options = {"num_warps": c.num_warps, "num_stages": c.num_stages}
    if getattr(c, "num_ctas", 1) not in (None, 1):
        options["num_ctas"] = c.num_ctas
    for name in ("maxnreg", "ir_override"):
        if getattr(c, name, None) is not None:
            options[name] = getattr(c, name)
    hook = getattr(c, "pre_hook", None)
    return TuneConfig(index=index, kwargs=dict(c.kwargs), options=options,
                      pre_hook=getattr(hook, "__name__", "pre_hook") if hook else "")


@dataclass(frozen=True)
class Chain:
    """A kernel's wrappers, outermost first, and the JITFunction inside."""

    jit: object
    wrappers: tuple = ()

    @property
    def autotuner(self):
        return next((w for w in self.wrappers if _is_autotuner(w)), None)

    @property
    def heuristics(self) -> dict:
        """Every heuristic's function by the name it sets."""
        return {k: f for w in self.wrappers if _is_heuristics(w) for k, f in w.values.items()}

    def configs(self) -> tuple[TuneConfig, ...]:
        a = self.autotuner
        return tuple(config_of(i, c) for i, c in enumerate(a.configs)) if a is not None else ()

    def config_names(self) -> set[str]:
        """Every name some config sets: they need no -p."""
        return {k for c in self.configs() for k in c.kwargs}


def _is_autotuner(obj) -> bool:
    return hasattr(obj, "configs") and hasattr(obj, "prune_configs") and hasattr(obj, "fn")


def _is_heuristics(obj) -> bool:
    return isinstance(getattr(obj, "values", None), dict) and hasattr(obj, "fn") and not _is_autotuner(obj)


def is_jit(obj) -> bool:
    """A JITFunction, or under TRITON_INTERPRET the interpreter's stand-in for one."""
    return hasattr(obj, "device_caches") or type(obj).__name__ == "InterpretedFunction"


def chain(obj, name: str, where: str = "") -> Chain:
    """The wrappers of `obj` down to its JITFunction; a clear error when `obj` is not a kernel."""
    wrappers, seen = [], obj
    for _ in range(16):
        if is_jit(seen):
            return Chain(seen, tuple(wrappers))
        if not hasattr(seen, "fn"):
            break
        wrappers.append(seen)
        seen = seen.fn
    raise KinspectError(f"'{name}'{where} is not a @triton.jit kernel ({_kind(obj)})")


def _kind(obj) -> str:
    import inspect

    if inspect.isfunction(obj):
        return "a plain Python function: decorate it with @triton.jit, or name the kernel it launches"
    if inspect.isclass(obj):
        return "a class"
    if inspect.ismodule(obj):
        return "a module"
    return f"a {type(obj).__name__}"


@dataclass(frozen=True)
class Applied:
    """What the wrappers make of one launch: the constexprs and options Triton compiles with."""

    constexprs: dict
    options: dict
    heuristics: dict = field(default_factory=dict)    # name -> value, as computed
    config: TuneConfig | None = None
    configs: int = 0                                  # how many the author wrote
    kept: tuple[int, ...] = ()                        # the ones prune_configs_by keeps for these arguments
    key: dict = field(default_factory=dict)           # the autotuner's key: argument name -> example value
    notes: tuple[str, ...] = ()
    args: dict = field(default_factory=dict)          # the arguments, tensor descriptors made

    def to_json(self) -> dict:
        return {"config": None if self.config is None else self.config.to_json(), "configs": self.configs,
                "kept": list(self.kept), "heuristics": _plain(self.heuristics), "key": _plain(self.key),
                "notes": list(self.notes)}


def apply(c: Chain, args: dict, constexprs: dict, config: int | None = None, inputs: dict | None = None) -> Applied:
    """Walk the wrappers as Triton's run() does for a launch with `args` (runtime arguments by
    name) and `constexprs` (what the user passes, e.g. -p values), with the autotuner on config
    number `config` (default: the first one pruning keeps). -p values the wrappers would set
    (a config's BLOCK_M, a heuristic's EVEN_K) override them, with a note. `inputs`: values the
    heuristics read that a launch passes and they then set (`"GEMMA": lambda a: bool(a["GEMMA"])`):
    seen by the heuristics, never an override."""
    given = dict(constexprs)
    kwargs = dict(constexprs)
    options: dict = {}
    computed: dict = {}
    notes: list[str] = []
    chosen, kept, count, key = None, (), 0, {}
    for w in c.wrappers:
        if _is_autotuner(w):
            configs = c.configs()
            count = len(configs)
            set_by_configs = {k for cfg in configs for k in cfg.kwargs}
            overridden = sorted(set_by_configs & set(given))
            kept, prune_note = prune(w, args, {k: v for k, v in kwargs.items() if k not in set_by_configs},
                                     strict=config is None)
            if prune_note:
                notes.append(prune_note)
            index = kept[0] if config is None else config
            if not 0 <= index < count:
                raise UsageError(f"--config {index} is out of range: the kernel has {count} autotune config"
                                 f"{'s' if count != 1 else ''} (0..{count - 1})")
            chosen = configs[index]
            if config is not None and index not in kept:
                notes.append(f"prune_configs_by drops config {index} for these arguments; compiled as asked")
            raw = w.configs[index]
            everything = raw.all_kwargs()
            for k, v in everything.items():
                if k in OPTION_FIELDS:
                    options[k] = v
                elif k not in given:
                    kwargs[k] = v
            if overridden:
                notes.append(f"-p {', '.join(overridden)} override{'s' if len(overridden) == 1 else ''} "
                             f"what the config sets")
            args = made(args, {**kwargs, **everything})
            if raw.pre_hook is not None:   # Triton runs it before the launch (e.g. a TMA block shape)
                try:
                    raw.pre_hook({**args, **kwargs, **everything})
                except Exception as e:
                    raise KinspectError(f"config {index}'s pre_hook raised {type(e).__name__}: {e}") from None
            key = {k: _key_value(args.get(k, kwargs.get(k))) for k in getattr(w, "keys", ())}
        elif _is_heuristics(w):
            for name, fn in w.values.items():
                if name in given:
                    notes.append(f"-p {name} overrides its @triton.heuristics value")
                    continue
                try:   # as Heuristics.run: each value sees the arguments and the values before it
                    kwargs[name] = computed[name] = fn({**(inputs or {}), **args, **kwargs})
                except Exception as e:
                    raise KinspectError(f"the @triton.heuristics value of '{name}' raised {type(e).__name__}: {e} "
                                        f"on the example arguments; give it with -p {name}=VALUE") from None
    return Applied(constexprs=kwargs, options=options, heuristics=computed, config=chosen, configs=count,
                   kept=tuple(kept), key=key, notes=tuple(notes), args=made(args, kwargs))


def made(args: dict, constexprs: dict) -> dict:
    """The arguments with each host tensor descriptor whose block shape names constexprs made,
    once those are known (before a config's pre_hook, which may set the block shape itself)."""
    from kinspect.compile.args import DescriptorSpec

    return {k: (v.make(constexprs, k) if isinstance(v, DescriptorSpec) and
                all(isinstance(b, int) or b in constexprs for b in v.block) else v) for k, v in args.items()}


def prune(autotuner, args: dict, kwargs: dict, strict: bool = False) -> tuple[tuple[int, ...], str]:
    """Indices of the configs `prune_configs_by` keeps for these arguments, by Triton's own
    prune_configs, given every argument by name (as a launch that passes them all positionally
    does). When the file's pruner raises: with `strict`, one line naming its line (a UsageError);
    otherwise all configs, with a note (a --config was asked for: it is compiled anyway)."""
    configs = list(autotuner.configs)
    everything = tuple(range(len(configs)))
    if not (getattr(autotuner, "early_config_prune", None) or getattr(autotuner, "perf_model", None)):
        return everything, ""
    saved = getattr(autotuner, "nargs", None)
    everything_named = {**kwargs, **args}
    autotuner.nargs = everything_named
    try:
        try:   # as a launch passing every argument by keyword (gemlite's pruner reads kwargs[...] of one)
            pruned = list(autotuner.prune_configs(dict(everything_named)))   # a generator raises while read
        except TypeError as e:
            if not any(w in str(e) for w in ("unexpected keyword argument", "multiple values for keyword")) or \
                    not everything_named:
                raise
            # a pruner (or perf model, which also gets nargs by name) written for launches that pass
            # everything positionally takes no keywords
            pruned = list(autotuner.prune_configs({}))
    except Exception as e:
        what = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}".rstrip(": ")
        at = _user_frame(e)
        if strict:
            raise UsageError(f"the kernel's prune_configs_by{at} raised {what} on the example arguments; give the "
                             f"value it reads with --arg/-p, or pick a config with --config N") from None
        return everything, (f"prune_configs_by{at} could not run on the example arguments ({what}); all "
                            f"{len(configs)} configs kept")
    finally:
        autotuner.nargs = saved
    kept = []
    for p in pruned:
        found = next((i for i, c in enumerate(configs) if c is p), None)
        if found is None:
            found = next((i for i, c in enumerate(configs) if c == p), None)
        if found is not None and found not in kept:
            kept.append(found)
    if not kept:
        return everything, ("prune_configs_by keeps no config for these arguments; all of them kept" if not pruned
                            else "prune_configs_by returned configs that are not in the list; all of them kept")
    note = "" if len(kept) == len(configs) else \
        f"prune_configs_by keeps {len(kept)} of {len(configs)} configs for these arguments"
    return tuple(kept), note


def _user_frame(e: BaseException) -> str:
    """` (pruner at file.py:11)`: the innermost frame of the exception outside Triton and kinspect."""
    import os
    import traceback

    frames = [f for f in traceback.extract_tb(e.__traceback__)
              if f.filename and not any(part in f.filename for part in (f"{os.sep}triton{os.sep}",
                                                                      f"{os.sep}kinspect{os.sep}"))]
    if not frames:
        return ""
    from pathlib import Path

    from kinspect.compile.shown import shown

    f = frames[-1]
    return f" ({f.name} at {shown(Path(f.filename))}:{f.lineno})"


def _key_value(v):
    """An autotune key's example value as shown: an int, or a tensor's dtype and shape."""
    shape = getattr(v, "shape", None)
    if shape is not None:
        return f"{str(getattr(v, 'dtype', '')).removeprefix('torch.')}{list(shape)}"
    return _plain(v)


def _plain(value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return str(value)
