"""The diff command: compile variants across values, tabulate their metrics, diff one stage.

Sweeps and diffs: compile variants across values, tabulate their metrics, diff one stage.

    result = compare(["fused_mm_softmax"], constexprs={"BLOCK_SIZE": [32, 64, 128]}, targets=["cuda:90"])
    result.rows        # one Row of metrics per variant
    result.text        # the normalized diff of one stage between two of them

Variants come from kernels compiled here (the cross product of the values, in parallel worker
processes, see sweep.py) and from saved ones: kinspect stores, Triton caches, dump folders, stage
files, or a variant's name in the store.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from kinspect.analysis.summary import VariantMetrics
from kinspect.bench.stats import Runtime
from kinspect.diff.configs import config_verdicts, user_notes
from kinspect.diff.correlation import explain
from kinspect.diff.result import DiffResult, stage_rank
from kinspect.diff.sweep import JobResult, Sweep
from kinspect.diff.table import Row, rows as make_rows
from kinspect.diff.textdiff import StageDiff
from kinspect.core.errors import KinspectError, NotFound, UsageError, did_you_mean, warn
from kinspect.core.model import Variant, natural
from kinspect.files.store import DEFAULT_OUT


def compare(items: list[str], *, constexprs: dict[str, list] | None = None, targets=(None,), num_warps=(None,),
            num_stages=(None,), args=(), size: str | None = None, stage: str | None = None,
            pair: str | None = None, out_dir: str | Path = DEFAULT_OUT, jobs: int | None = None,
            progress: Callable[[JobResult | None, int], None] | None = None,
            timer: Callable[[Variant], Runtime | None] | None = None, text: bool = True,
            retarget=(), configs=None, picker=None, keep_reports: bool | int = False, ex=None) -> DiffResult:
    """Compile and collect the variants `items` name, tabulate them and diff one stage of two.
    With `retarget` CPU specs, each variant's LLVM IR compiled for each CPU takes its place (the
    variant itself stays when it has machine code of its own). An autotuned kernel from the
    user's file is swept over its configs (`configs`: only these numbers); when they are timed,
    `picker(variant)` gives what Triton's own autotuner picks, said beside the fastest. With
    `keep_reports`, the analyses made here are kept on the rows (Row.report: a report shows them).
    `ex` (kinspect.core.executor): a Ray cluster compiles the sweep on its nodes, and timings run on
    every GPU it has (a local one: every visible GPU), the baseline on each."""
    from kinspect.diff import sweep

    if not items:
        raise UsageError("name a kernel to sweep (kinspect diff KERNEL -p BLOCK_SIZE=32,64), two kernels "
                         "(a.py:kern b.py:kern), or saved variants (folders, stores, variant names)")
    if retarget:
        from kinspect.backends import retarget as cpus

        for spec in retarget:
            cpus.parse(spec)  # a typo fails before anything is compiled
    kernels, saved_at, replayed = [], {}, []
    sweeping = bool(constexprs) or any(x is not None for x in (*num_warps, *num_stages))
    for i, item in enumerate(items):
        found = _saved(item, Path(out_dir))
        if found is None:
            kernels.append(sweep.absolute_kernel(item))
        elif sweeping and any(v.ran for v in found):
            replayed += _one_launched(item, found)   # compiled again with its captured launch (kinspect.replay)
        else:
            saved_at[i] = found
    if not kernels and not replayed and (sweeping or args or configs):
        raise UsageError("-p, --arg, --config, --num-warps and --num-stages apply to kernels compiled here or to "
                         "captured variants (kinspect capture); the items given are saved variants with no "
                         "launch records")
    compiled: list[Variant] = []
    failed: list[JobResult] = []
    result_sweep = None
    known = {}
    least = 2 if text else 1  # a table (a report) can hold one variant; a diff needs two
    if kernels or replayed:
        from kinspect.files.store import Store

        with Store(out_dir).lock():     # the workers write under it: started inside, they know
            result_sweep = _sweep(kernels, replayed, targets=targets, constexprs=constexprs, num_warps=num_warps,
                                  num_stages=num_stages, args=args, size=size, out_dir=out_dir, jobs=jobs,
                                  progress=progress, configs=configs, retarget=retarget, least=least,
                                  saved=sum(len(v) for v in saved_at.values()), ex=ex)
        compiled, failed = _collect(result_sweep)
        known = {o.path: VariantMetrics.from_json(o.metrics) for o in result_sweep.outcomes if o.path and o.metrics}
    else:
        _enough(sum(len(v) for v in saved_at.values()) * max(1, len(retarget)), least=least)
    variants = _in_order(items, compiled, saved_at)
    if retarget:
        variants = _retargeted(variants, retarget)
    _enough(len(variants), f" ({failed[0].job.describe()} failed: {failed[0].error})" if failed else "", least=least)
    rows = make_rows(variants, known, keep_reports=keep_reports)
    notes = (list(result_sweep.notes) if result_sweep else []) + user_notes(variants)
    if replayed:
        from kinspect.diff.replayed import replayed_note

        notes += [replayed_note(v) for v in replayed]
    if timer is not None and ex is not None and (len(getattr(ex, "gpus", ())) > 1 or ex.name != "local"):
        rows = _timed_by(rows, ex, size, notes)
        notes += config_verdicts(rows, picker)
    elif timer is not None:
        rows = [_timed(r, timer, notes) for r in rows]
        notes += config_verdicts(rows, picker)
    chosen = chosen_stage = stage_diff = None
    if text:
        chosen = choose_pair(pair, rows)
        a, b = rows[chosen[0]].variant, rows[chosen[1]].variant
        chosen_stage = choose_stage(stage, a, b)
        stage_diff = diff_variants(a, b, chosen_stage)
    return DiffResult(rows=rows, failed=failed, stage=chosen_stage, pair=chosen, text=stage_diff,
                      links=explain(rows), notes=notes, sweep=result_sweep)


def _sweep(kernels, replayed, *, targets, constexprs, num_warps, num_stages, args, size, out_dir, jobs, progress,
           configs, retarget, least, saved, ex=None) -> Sweep:
    """Plan (an autotuned kernel's configs), check there is enough to compare, compile. `replayed`:
    captured variants compiled again with their launch's arguments and the swept values."""
    from kinspect.diff import sweep

    target_list = [_offline_target(t) for t in targets]
    config_list, started = sweep.plan(kernels, targets=target_list, constexprs=constexprs, args=args,
                                      only=configs, workers=jobs)
    try:
        job_list = sweep.cross(kernels, targets=target_list, constexprs=constexprs, num_warps=num_warps,
                               num_stages=num_stages, args=args, size=size, out_dir=out_dir, configs=config_list)
        if replayed:
            from kinspect.diff.replayed import jobs as replay_jobs

            job_list += replay_jobs(replayed, targets=targets, constexprs=constexprs, num_warps=num_warps,
                                    num_stages=num_stages, out_dir=out_dir)
        _enough((len(job_list) + saved) * max(1, len(retarget)), least=least)
    except BaseException:
        for w in started:
            w._stop()
        raise
    if ex is not None and ex.name != "local":
        import time

        from kinspect.diff.remote import compile_all

        for w in started:
            w._stop()
        t0 = time.perf_counter()
        outcomes = compile_all(job_list, ex, progress)
        return sweep.Sweep(outcomes=tuple(outcomes), workers=len(job_list), cores=0, seconds=time.perf_counter() - t0,
                           notes=(f"compiled on the {ex.name} cluster, one task a variant",))
    return sweep.run(job_list, workers=jobs, progress=progress, started=started)


def _timed_by(rows: list[Row], ex, size, notes: list[str]) -> list[Row]:
    """The rows timed on every GPU the executor has (kinspect.diff.remote.time_all): each names its
    GPU and its ratio to the baseline (the first row) timed on that same GPU."""
    import dataclasses

    from kinspect.diff.remote import baseline_spread_note, time_all

    timed = time_all([r.variant.path for r in rows], size, ex)
    out = []
    for r, t in zip(rows, timed):
        if t.error or t.runtime is None:
            if t.error:
                notes.append(f"{r.label}: not timed: {t.error}")
            out.append(r)
            continue
        ratio = t.runtime.median_ms / t.baseline.median_ms if t.baseline is not None and t.baseline.median_ms else None
        out.append(dataclasses.replace(r, runtime=dataclasses.replace(
            t.runtime, gpu=t.gpu.describe() if t.gpu is not None else "", vs_baseline=ratio)))
    gpus = {t.gpu.key: t.gpu for t in timed if t.gpu is not None}.values()
    hosts = len({g.host for g in gpus}) > 1
    used = sorted(g.short(hosts) for g in gpus)
    notes.append(f"timed on {len(used)} GPU(s) ({', '.join(used)}) through the {ex.name} executor; the "
                 f"baseline (row 1) was timed on each, and each row's ratio is to the baseline on its own GPU")
    spread = baseline_spread_note(timed)
    if spread:
        notes.append(spread)
    return out


def _timed(r: Row, timer, notes: list[str]) -> Row:
    """The row with its runtime; a launch that fails (out of shared memory on this device, say) is a
    note, and the other variants are still timed."""
    import dataclasses

    try:
        return dataclasses.replace(r, runtime=timer(r.variant))
    except Exception as e:
        message = str(e).strip().splitlines()
        notes.append(f"{r.label}: not timed: {type(e).__name__}: {message[-1] if message else ''}")
        return r


def _retargeted(variants: list[Variant], specs) -> list[Variant]:
    from kinspect.analysis.stages import isa_stage
    from kinspect.analysis.derived import llir_stage, retargeted

    out = []
    for v in variants:
        llir_stage(v)  # a variant without LLVM IR is a clear error
        out += ([v] if isa_stage(v) is not None else []) + [retargeted(v, spec) for spec in specs]
    return out


def _enough(count: int, why: str = "", least: int = 2) -> None:
    if count >= least:
        return
    if least == 1:
        raise UsageError(f"no variants to show{why}; name a kernel (fused_mm_softmax, file.py:name), a kinspect "
                         f"store, a Triton cache or dump folder, or stage files")
    raise UsageError(f"diff needs at least two variants, got {count}{why}; give two values "
                     f"(-p BLOCK_SIZE=32,64), two targets (-t cuda:80,cuda:90) or two kernels or folders")


def _saved(item: str, store: Path) -> list[Variant] | None:
    """Variants an item names when it is saved (a folder, a file, a variant in the store), else None."""
    from kinspect.files import sources
    from kinspect.compile.user import is_user_kernel
    from kinspect.analysis.derived import complete

    if is_user_kernel(item):
        return None
    p = Path(item)
    if p.exists():
        return sorted((complete(v) for v in sources.at_most(sources.readable(sources.discover(p)))), key=natural)
    from kinspect.analysis.lookup import row

    if (numbered := row(item, store)) is not None:     # a row of `kinspect ls STORE`
        return [complete(numbered)]
    if store.is_dir():
        variants = sources.discover(store).variants
        matches = [v for v in variants if v.name == item or v.name.startswith(item) and item not in ("", ".")]
        if not matches and not _shipped(item):   # a kernel's name in the store (a captured program's kernel)
            matches = [v for v in variants if v.kernel == item or Path(v.path).parent.name == item]
        for line in (f"variant {v.name}: {x}" for v in matches for x in v.problems):
            warn(line)
        if matches:
            return sorted((complete(v) for v in matches), key=natural)
    return None


def _shipped(name: str) -> bool:
    from kinspect import kernels

    return name in kernels.names()


def _one_launched(item: str, found: list[Variant]) -> list[Variant]:
    """The captured variant a sweep recompiles: the one of `found` that was launched."""
    launched = [v for v in found if v.ran]
    if len(launched) > 1:
        raise UsageError(f"'{item}' names {len(launched)} captured variants; sweep one of them: " + ", ".join(
            f"{v.name} ({v.launches.calls} calls)" for v in launched[:6]))
    return launched


def _offline_target(t: str | None) -> str | None:
    """Workers compile offline for the device's architecture: one CUDA context, not one per worker.
    A CPU backend's device stays "device": each worker compiles on its own CPU."""
    from kinspect.compile.targets import resolve

    if t not in (None, "", "auto", "device"):
        resolve(t)  # a bad target fails here, once, not in every worker
        return t
    resolved = resolve(t)
    if resolved.backend.gpu:
        return str(resolved.target)
    return "device"


def _collect(s: Sweep) -> tuple[list[Variant], list[JobResult]]:
    from kinspect.files.store import read_record

    ok = [o for o in s.outcomes if o.path]
    failed = [o for o in s.outcomes if not o.path]
    messages = {o.error for o in failed}
    if failed and not ok and len(messages) == 1:
        raise KinspectError(messages.pop())  # e.g. an unknown kernel: one line, not one per variant
    return [read_record(Path(o.path)) for o in ok], failed


def _in_order(items, compiled, saved_at) -> list[Variant]:
    """Saved variants where their items stood; the compiled ones (the cross product, kernels in
    the order given) where the first kernel stood."""
    out: list[Variant] = []
    placed = False
    for i in range(len(items)):
        if i in saved_at:
            out += saved_at[i]
        elif not placed:
            out += compiled
            placed = True
    return out


def choose_pair(text: str | None, rows: list[Row]) -> tuple[int, int]:
    """--pair A,B: each a row number (1-based, as the table shows) or a label or a value in one."""
    if not text:
        return 0, 1
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 2 or not all(parts):
        raise UsageError(f"--pair '{text}' is not A,B; e.g. --pair 1,3 or --pair 32,128")
    picked = tuple(find_row(p, rows) for p in parts)
    if picked[0] == picked[1]:
        raise UsageError(f"--pair '{text}' names one variant twice")
    return picked


def find_row(word: str, rows: list[Row], option: str = "--pair") -> int:
    """The row a word names: its label, one value in its label (32 for BLOCK_SIZE=32), or its number."""
    labels = [r.label for r in rows]
    exact = [i for i, label in enumerate(labels) if label == word]
    if len(exact) == 1:
        return exact[0]
    # a bare number is a value (BLOCK_SIZE=32) or a row number, never a config number: config=1
    # is named in full, so `--pair 1,2` stays rows 1 and 2 of an autotuned kernel's sweep
    tokens = [i for i, label in enumerate(labels)
              if any(word == tok or word == tok.partition("=")[2] and not tok.startswith("config=")
                     for tok in label.split())]
    if len(tokens) == 1:
        return tokens[0]
    if word.isdigit() and 1 <= int(word) <= len(rows):
        return int(word) - 1
    what = "matches several variants" if len(tokens) > 1 else "matches no variant"
    raise UsageError(f"{option}: '{word}' {what}; use a row number 1..{len(rows)} or one of: {', '.join(labels)}")


def choose_stage(name: str | None, a: Variant, b: Variant) -> str:
    common = [s for s in a.stages if not s.binary and b.stage(s.name) is not None and not b.stage(s.name).binary]
    if name:
        if any(s.name == name for s in common):
            return name
        names = [s.name for s in common]
        raise NotFound(f"stage '{name}' is not in both variants{did_you_mean(name, names)}; "
                       f"stages they share: {', '.join(names) or 'none'}")
    ranked = [s for s in common if stage_rank(s.dialect) is not None]
    if not ranked:
        raise NotFound(f"the two variants share no text stage to diff ({', '.join(s.name for s in a.stages)} vs "
                       f"{', '.join(s.name for s in b.stages)})")
    return min(ranked, key=lambda s: stage_rank(s.dialect)).name


def diff_variants(a: Variant, b: Variant, stage: str) -> StageDiff:
    from kinspect.analysis.stages import open_lines
    from kinspect.diff.normalize import normalize
    from kinspect.diff.textdiff import diff_stage

    texts = []
    for v in (a, b):
        with open_lines(v, v.stage(stage)) as lines:
            texts.append(list(lines))
    names = (a.kernel, b.kernel)
    dialect_a, dialect_b = a.stage(stage).dialect, b.stage(stage).dialect
    return diff_stage(stage, texts[0], texts[1], normalize(texts[0], dialect_a, names=names),
                      normalize(texts[1], dialect_b, names=names))
