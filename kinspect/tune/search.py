"""A tune, start to end: the findings' candidates first, then widening steps from the best so far,
within a budget; each round compiled in parallel (kinspect.diff.sweep), pruned by the resources of its
compiled code, then checked and timed on the device through a runner (kinspect.tune.run.Replayer).

Inductor's own configs and max_autotune's are measured the same way, for the comparison.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

from kinspect.core.model import Variant
from kinspect.tune.result import Trial, TrialCode, TuneResult, fastest, scaled_ms
from kinspect.tune.space import Candidate, Knobs, finding_kinds, from_findings, neighbours, short_why

DEFAULT_TRIALS = 12
TUNE_DIR = ".kinspect-tune"      # candidates' compiled variants, in the store beside the tuned one
IMPROVES = 0.99                  # a step counts as better below 99% of the best median
WHY = 44                         # the progress's column of what proposed a candidate


@dataclass
class Setup:
    """What a tune works on: the variant's launch, knobs, findings, Inductor heuristic."""

    variant: Variant
    spec: object
    knobs: Knobs
    kinds: list[str]
    original_code: dict


def setup(v: Variant) -> Setup:
    from kinspect.analysis.summary import summarize
    from kinspect.replay.spec import from_variant, generated
    from kinspect.tune import heuristic

    spec = from_variant(v)
    h = heuristic.read(spec.ref.text) if generated(spec.ref) else None
    knobs = Knobs.of(spec, h)
    code = summarize(v).to_json()
    return Setup(v, spec, knobs, finding_kinds(code["findings"], knobs), code)


def prune(code: TrialCode, original: TrialCode, *, spills_too: bool = True) -> str:
    """Why the compiled code rules a candidate out before it is timed ("" when it does not): it cannot
    launch (no block fits an SM), or (`spills_too`: kinspect's own candidates) it spills more than the
    original. The autotuners' configs are timed as their autotuners would time them, spills or not."""
    if code.occupancy == 0:
        return f"does not fit on an SM ({code.occupancy_limiter or 'resources'})"
    spills, before = code.spills or 0, original.spills or 0
    if spills_too and spills > before:
        return f"spills {spills} registers (the original {before})"
    return ""


def tune(v: Variant, *, runner, trials: int | None = DEFAULT_TRIALS, budget_s: float | None = None,
         compare: bool = True, progress: Callable[[str], None] | None = None, workers: int | None = None,
         compiler: Callable | None = None) -> TuneResult:
    """Tune the captured variant `v` on `runner` (kinspect.tune.run.OnEveryGpu or OneByOne, or an object with
    check() and time() whose candidates run in turn), at most `trials` kinspect candidates run
    and/or `budget_s` seconds. `compiler(jobs)` compiles sweep Jobs (default: kinspect.diff.sweep.run)."""
    from kinspect.tune import inductor
    from kinspect.tune.run import OneByOne

    t0 = time.perf_counter()
    s = setup(v)
    say = progress or (lambda line: None)
    device_runner = runner if hasattr(runner, "run_all") else OneByOne(runner)
    compiler = compiler or (lambda jobs: _sweep(jobs, workers))
    out_dir = _tune_dir(Path(v.path).parent.parent)
    knobs = s.knobs
    done: dict[tuple, Trial] = {}
    trials_out: list[Trial] = []
    notes = list(knobs.notes)
    spent = {"compile": 0.0, "device": 0.0}

    def kinspect_ran() -> int:
        """kinspect's candidates that ran on the device so far (what --trials counts)."""
        return sum(1 for t in trials_out if t.candidate.origin == "kinspect" and t.ran)

    def left(widening: bool = True) -> bool:
        """Trials left, and (widening: the budget bounds the widening steps, never the findings' first
        candidates) time left."""
        return (trials is None or kinspect_ran() < trials) and \
            (not widening or budget_s is None or time.perf_counter() - t0 < budget_s)

    def measure(batch: list[Candidate], widening: bool = True) -> None:
        """Compile the batch's new candidates in parallel, rule out those their code rules out, run the rest
        on the device through the runner (in turn, or on every GPU at once), keep each trial in the batch's
        order; kinspect's candidates stop at --trials (and, when `widening`, at --budget)."""
        fresh = list({c.key(): c for c in batch if c.key() not in done}.values())
        if fresh:
            say(f"  compiling {len(fresh)} candidate(s) in parallel ...")
        t1 = time.perf_counter()
        compiled = _compile(s, fresh, compiler, out_dir) if fresh else {}
        spent["compile"] += time.perf_counter() - t1
        planned: list[tuple[Candidate, Trial | None]] = []    # (candidate, its trial before the device; None: a repeat)
        runs: list[int] = []                                    # the planned entries that go to the device
        planned_keys: dict[tuple, int] = {}
        room = None if trials is None else trials - kinspect_ran()
        for c in batch:
            if c.key() in done or c.key() in planned_keys:
                planned.append((c, None))
                continue
            if c.origin == "kinspect" and (room is not None and room <= 0 or not left(widening)):
                break
            before, to_run = _before_device(s, c, compiled.get(c.key()), done.get(knobs.original.key()))
            planned_keys[c.key()] = len(planned)
            planned.append((c, before))
            if to_run:
                runs.append(len(planned) - 1)
                room = room - 1 if room is not None and c.origin == "kinspect" else room
        device: dict[int, object] = {}
        shown = [0]

        def show(upto: int) -> None:
            """Keep and say the planned trials in order, up to the first whose run has not come back."""
            while shown[0] < len(planned) and shown[0] < upto:
                i = shown[0]
                c, before = planned[i]
                if before is not None:
                    if i in runs:
                        if i not in device:
                            return
                        before = _after_device(before, device[i])
                    _say_trial(say, before, done.get(knobs.original.key()))
                    done[c.key()] = before
                else:   # the same config as one measured already: its result counts for this origin too
                    if c.key() not in done:
                        return
                    say(f"  {c.origin:<12} {c.label():<32} {short_why(c.why, WHY):<{WHY}} the same config as "
                        f"{next(x.candidate.origin for x in trials_out if x.candidate.key() == c.key())}'s: that trial")
                trials_out.append(replace(done[c.key()], candidate=c))
                shown[0] += 1

        def each(j: int, ran) -> None:
            device[runs[j]] = ran
            show(len(planned))

        t1 = time.perf_counter()
        show(len(planned))
        if runs:
            executed = device_runner.run_all(
                [(planned[i][0], knobs.grid(planned[i][0])) for i in runs], knobs.original,
                knobs.grid(knobs.original),
                stop=lambda j: planned[runs[j]][0].origin == "kinspect" and not left(widening), each=each)
            for j, ran in enumerate(executed):
                if ran is not None:
                    device[runs[j]] = ran
            show(next((i for i in runs if i not in device), len(planned)))   # what was not run is left out
        spent["device"] += time.perf_counter() - t1

    say(f"tuning {v.kernel}: {knobs.original.label()} grid {knobs.captured_grid}; findings: "
        f"{', '.join(s.kinds) or 'none'}; knobs: {', '.join(knobs.limits) or 'none'}, num_warps, num_stages")
    theirs: list[Candidate] = []
    torch_version = ""
    if compare and knobs.heuristic is not None:
        try:
            torch_version = inductor.torch_version()
            left_out: list[str] = []
            theirs = inductor.configs(knobs.heuristic, knobs, max_autotune=False, left_out=left_out) + \
                inductor.configs(knobs.heuristic, knobs, max_autotune=True, left_out=left_out)
            notes += left_out
        except Exception as e:     # noqa: BLE001 - torch's heuristics on another torch's arguments
            notes.append(f"Inductor's configs not compared: {e}")
    if compare:
        theirs += autotune_configs(v, knobs, s.spec)
    first = from_findings(knobs, s.kinds)
    measure([knobs.original] + theirs + first, widening=False)     # one parallel compile; the original runs first
    best = fastest(trials_out, "kinspect")
    while left():
        more = neighbours(knobs, best.candidate if best else knobs.original, set(done))
        if not more:
            break
        if trials is not None:      # compile no more than can still run
            more = more[:trials - kinspect_ran()]
        measure(more)
        new = fastest(trials_out, "kinspect")
        original = next((t for t in trials_out if t.candidate.origin == "original"), None)
        if best is not None and new is not None and \
                scaled_ms(new, original) >= scaled_ms(best, original) * IMPROVES:
            best = new
            break
        best = new
    gpus = device_runner.devices
    say(f"  tuned in {time.perf_counter() - t0:.1f} s: compiling {spent['compile']:.1f} s, on the device (JIT, "
        f"check, timing) {spent['device']:.1f} s" + (f" on {gpus} GPUs" if gpus > 1 else ""))
    return TuneResult(kernel=v.kernel, variant=Path(v.path).name, target=str(v.target), findings=tuple(s.kinds),
                      trials=tuple(trials_out), seconds=time.perf_counter() - t0,
                      budget=" and ".join(x for x in (f"--trials {trials}" if trials is not None else "",
                                                      f"--budget {budget_s:g} s" if budget_s is not None else "") if x),
                      notes=tuple(notes), torch=torch_version)


def autotune_configs(v: Variant, knobs: Knobs, spec) -> list[Candidate]:
    """The configs of the kernel's own @triton.autotune, as the capture recorded its decisions (kinspect's
    store keeps them): what Triton's autotuner chooses from. Configs that set a constexpr the tune does not
    vary to another value than the captured launch's are left out."""
    from kinspect.files.store import read_autotune

    names = dict(knobs.original.constexprs)
    fixed = {a.name: a.value for a in spec.args}
    out: list[Candidate] = []
    for d in read_autotune(Path(v.path).parent.parent):
        if d.kernel != v.kernel:
            continue
        configs = [t.config for t in d.timings] or [d.best]
        for i, cfg in enumerate(configs):
            if any(k not in names and fixed.get(k, val) != val for k, val in cfg.kwargs.items()):
                continue
            c = Candidate(constexprs=tuple(sorted({**names, **{k: int(x) for k, x in cfg.kwargs.items()
                                                                 if k in names}}.items())),
                          num_warps=int(cfg.options.get("num_warps", knobs.original.num_warps)),
                          num_stages=int(cfg.options.get("num_stages", knobs.original.num_stages)),
                          why=f"autotune config {i + 1} of {len(configs)}", origin="autotune")
            if all(c.key() != x.key() for x in out):
                out.append(c)
    return out


def _tune_dir(root: Path) -> Path:
    """Where the candidates are compiled: a folder of the store that no link leads out of."""
    from kinspect.core.errors import KinspectError
    from kinspect.files.store import Outside, contained

    try:
        return contained(root, TUNE_DIR)
    except Outside:
        raise KinspectError(f"'{root / TUNE_DIR}' is a link out of the store; kinspect does not compile or write "
                            f"through it: remove it") from None


def _sweep(jobs, workers):
    from kinspect.diff import sweep

    return list(sweep.run(jobs, workers=workers).outcomes)


def _compile(s: Setup, batch: list[Candidate], compiler, out_dir: Path) -> dict:
    """{candidate key: sweep JobResult}, compiled in parallel workers."""
    from kinspect.diff.jobs import Job

    jobs = [Job(kernel=s.variant.kernel, target=str(s.variant.target), constexprs=c.constexprs, num_warps=c.num_warps,
                num_stages=c.num_stages, out_dir=str(out_dir), replay=str(Path(s.variant.path).resolve()))
            for c in batch]
    from kinspect.files.store import Store

    out_dir.mkdir(parents=True, exist_ok=True)
    with Store(out_dir).lock():      # the workers write under this process's lock
        return {c.key(): o for c, o in zip(batch, compiler(jobs))}


def _before_device(s: Setup, c: Candidate, outcome, original: Trial | None) -> tuple[Trial, bool]:
    """A candidate's trial before the device, and whether it goes on to run there: not when its compile
    failed or its code or the kernel's limits rule it out (the trial says which). The original always runs."""
    knobs = s.knobs
    is_original = c.key() == knobs.original.key()
    code = (outcome.metrics or {}) if outcome is not None and outcome.metrics else s.original_code if is_original \
        else {}
    kinds = tuple(dict.fromkeys(f["kind"] for f in code.get("findings", ()) if f.get("kind")))
    base = Trial(candidate=c, status="timed", grid=knobs.grid(c), code=TrialCode.of(code), findings=kinds)
    if is_original:
        return base, True
    if outcome is None or outcome.error:
        return replace(base, status="failed", why=f"compile: {outcome.error if outcome else 'not compiled'}"), False
    why = (knobs.valid(c) if c.origin == "kinspect" else "") or \
        prune(base.code, original.code if original else TrialCode.of(s.original_code),
              spills_too=c.origin == "kinspect")
    return (replace(base, status="pruned", why=why), False) if why else (base, True)


def _after_device(base: Trial, ran) -> Trial:
    """A candidate's trial from its run on the device (kinspect.tune.run.TrialRun)."""
    from kinspect.tune.result import Baseline

    base = replace(base, gpu=ran.gpu, baseline=None if ran.baseline is None else
                   Baseline(ran.baseline.median, ran.baseline.p20, ran.baseline.p80))
    if ran.error:
        return replace(base, status="failed", why=f"run: {ran.error}")
    if not ran.ok:
        return replace(base, status="wrong", why=ran.line)
    w = ran.wall
    return replace(base, why=ran.line, median_ms=w.median, p20_ms=w.p20, p80_ms=w.p80, runs=w.n)


def _say_trial(say, t: Trial, original: Trial | None) -> None:
    from kinspect.tune.result import speedup

    c = t.candidate
    sp = speedup(original, t) if t.status == "timed" and original is not None and original.median_ms else None
    speed = f" ({sp.ratio:.2f}x)" if sp is not None else ""
    say(f"  {c.origin:<12} {c.label():<32} {short_why(c.why, WHY):<{WHY}} " +
        (f"{t.median_ms * 1000:9.1f} µs{speed}" if t.status == "timed" else f"{t.status}: {t.why[:90]}"))
