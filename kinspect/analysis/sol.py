"""How far each kernel of a captured program is from what the device allows ("speed of light").

    speeds = kernel_speeds(variants, ceilings)      # {kernel name: Speed}
    total = program_speed(speeds.values())

Per variant launched with GPU time (`kinspect capture --time`): bytes per call (the estimate of
kinspect.analysis.traffic, or what Nsight Compute measured when `--counters` measured it), FLOPs per
call for kernels with tl.dot (kinspect.analysis.flops), the achieved GB/s and TFLOP/s, their share
of the device's measured copy bandwidth and matmul peak (kinspect.files.ceilings), the ideal time (what
the bytes take at the copy bandwidth, the FLOPs at the peak, or its launches at the least time one
launch takes on the device, whichever is longest) and the headroom: GPU time minus ideal time, what
fixing the kernel could win at most. A kernel's figures sum its variants'.

The per-launch floor keeps a kernel that moves almost nothing from showing its whole GPU time as
headroom: it is the device's measured floor (`capture --time` keeps it in device.json), else the
shortest launch the capture itself timed (a lower bound of the device's floor), said in `floor_note`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kinspect.files.ceilings import Ceilings
from kinspect.core.model import Variant

MEASURED = "measured (Nsight Compute: DRAM reads, and writes with those still held in L2 at the kernel's end)"


@dataclass(frozen=True)
class Speed:
    kernel: str
    gpu_ms: float | None = None           # GPU time of the timed launches
    timed_calls: int = 0
    bytes_per_call: float | None = None
    bytes_method: str = ""                # kinspect.analysis.traffic's method, or MEASURED
    upper_bound: bool = False             # the bytes are an upper bound (indirect indices, tensor sizes)
    flops_per_call: float | None = None
    gb_per_s: float | None = None
    pct_of_bandwidth: float | None = None
    tflop_per_s: float | None = None
    pct_of_peak: float | None = None
    ideal_ms: float | None = None
    headroom_ms: float | None = None
    bound_by: str = ""                    # "memory", "compute" or "launch": which ceiling gives the ideal time
    bandwidth_ceiling: str = ""           # what pct_of_bandwidth and the memory ideal are against: "DRAM", "L2"
                                          # (inputs just written by the kernel before), "L2 and DRAM"
    notes: tuple[str, ...] = field(default_factory=tuple)
    bandwidth_of: str = ""                # a datasheet figure pct_of_bandwidth is a share of (not a measurement)

    def to_json(self) -> dict:
        from kinspect.analysis.traffic import method_text

        return {"bytes_per_call": self.bytes_per_call, "bytes_method": self.bytes_method or None,
                "bytes_method_means": method_text(self.bytes_method) or None,
                "bytes_upper_bound": self.upper_bound, "flops_per_call": self.flops_per_call,
                "gb_per_s": _round(self.gb_per_s, 1), "pct_of_bandwidth": _round(self.pct_of_bandwidth, 1),
                "bandwidth_ceiling": self.bandwidth_ceiling or None,
                "tflop_per_s": _round(self.tflop_per_s, 2), "pct_of_peak": _round(self.pct_of_peak, 1),
                "ideal_ms": _round(self.ideal_ms, 4), "headroom_ms": _round(self.headroom_ms, 4),
                "bound_by": self.bound_by or None, "speed_notes": list(self.notes),
                "pct_of_bandwidth_of": self.bandwidth_of or None}


def _round(x: float | None, digits: int) -> float | None:
    return None if x is None else round(x, digits)


def variant_speed(v: Variant, ceilings: Ceilings | None, floor_us: float | None = None) -> Speed | None:
    """The figures of one variant; None when no launch of it was timed."""
    la = v.launches
    gpu = la.gpu if la is not None else None
    if gpu is None or not gpu.calls:
        return None
    from kinspect.files import counters
    from kinspect.analysis.flops import flops
    from kinspect.analysis.traffic import traffic

    notes = []
    measured = counters.read(v.path) if v.path else None
    if measured is not None and measured.dram_bytes is not None:
        per_call, method, bound = measured.dram_bytes, MEASURED, False
        notes += list(measured.notes)
    else:
        t = traffic(v)
        per_call, method, bound = (t.bytes, t.describe(), t.upper_bound) if t is not None else (None, "", False)
        if t is not None:
            notes += list(t.notes)
    f = flops(v)
    flops_per_call = f.per_call if f is not None else None
    if f is not None and f.per_call is None:
        notes.append(f"FLOPs not counted: {f.how}")
    return _figures(v.kernel, gpu.total_ms, gpu.calls, per_call, method, bound, flops_per_call,
                    f.dtype if f is not None else "", ceilings, tuple(notes), floor_us)


def _figures(kernel, gpu_ms, calls, per_call, method, bound, flops_per_call, dtype, ceilings, notes,
             floor_us: float | None = None) -> Speed:
    seconds = gpu_ms * 1e-3
    gbps = per_call * calls / seconds / 1e9 if per_call is not None and seconds > 0 else None
    tflops = flops_per_call * calls / seconds / 1e12 if flops_per_call and seconds > 0 else None
    pct_bw = pct_peak = ideal = None
    bound_by = ""
    ceiling_name = ""
    if ceilings is not None:
        memory_ms = None
        if per_call is not None and gbps is not None:
            bandwidth, ceiling_name = ceilings.bandwidth_for(per_call, gbps)
            if bandwidth is None:
                notes = notes + (_above_dram(gbps, ceilings.copy_gbps, bound),)
            elif gbps > bandwidth * (1 + _SLACK):
                # faster than even the ceiling it is held to: the byte estimate is too high (an upper
                # bound, or reads the index expressions count that the kernel's masks skip)
                notes = notes + (f"its {_bytes_what(bound)} at the measured time would be {gbps:,.0f} GB/s, above "
                                 f"the {ceiling_name} ceiling ({bandwidth:,.0f} GB/s): the byte estimate is too high, "
                                 f"so no ideal time is drawn from bytes (--counters measures them)",)
                ceiling_name = ""
            else:
                pct_bw = min(100.0, 100 * gbps / bandwidth)
                memory_ms = 1e3 * per_call * calls / (bandwidth * 1e9)
                if ceiling_name != "DRAM":
                    notes = notes + (f"{gbps:,.0f} GB/s is above the DRAM copy bandwidth ({ceilings.copy_gbps:,.0f} "
                                     f"GB/s): its inputs came from the L2 (written just before by the kernel before "
                                     f"it); measured against the L2 ceiling ({ceilings.l2_gbps:,.0f} GB/s)"
                                     + (" for the bytes that fit in the L2" if ceiling_name != "L2" else ""),)
        peak = ceilings.peak(dtype) if dtype else None
        compute_ms = 1e3 * flops_per_call * calls / (peak * 1e12) if flops_per_call and peak else None
        pct_peak = min(100.0, 100 * tflops / peak) if tflops is not None and peak else None
        if tflops is not None and peak and tflops > peak * (1 + _SLACK):
            notes = notes + (f"{tflops:,.0f} TFLOP/s is above the measured matmul peak ({peak:,.0f}, torch.matmul): "
                             f"shown as 100%; the peak is what cuBLAS reached, not what the device allows",)
        if flops_per_call and not peak:
            notes = notes + (f"no measured matmul peak for {dtype or 'its dot type'}: the ideal time counts bytes "
                             f"only",)
        known = [(x, w) for x, w in ((memory_ms, "memory"), (compute_ms, "compute")) if x is not None]
        if known and floor_us:
            known.append((calls * floor_us * 1e-3, "launch"))
        if known:
            ideal, bound_by = max(known)
    if ideal is not None and ideal > gpu_ms:
        notes = notes + (_BEATS_IDEAL,)
    return Speed(kernel=kernel, gpu_ms=gpu_ms, timed_calls=calls, bytes_per_call=per_call, bytes_method=method,
                 upper_bound=bound, flops_per_call=flops_per_call, gb_per_s=gbps, pct_of_bandwidth=pct_bw,
                 tflop_per_s=tflops, pct_of_peak=pct_peak, ideal_ms=ideal,
                 headroom_ms=_headroom(gpu_ms, ideal), bound_by=bound_by, bandwidth_ceiling=ceiling_name, notes=notes,
                 bandwidth_of=_bandwidth_of(ceilings) if pct_bw is not None else "")


def _bandwidth_of(c: Ceilings) -> str:
    """What a % of bandwidth is a share of, where it is not a measurement (bandwidth_ceiling says which
    measured one)."""
    if c.method == "datasheet":
        return f"{c.device}'s datasheet {c.copy_gbps:,.0f} GB/s (not measured)"
    return ""


_SLACK = 0.02      # timing noise: a rate this close above a ceiling is at the ceiling


def _bytes_what(bound: bool) -> str:
    return "bytes (an upper bound: its tensors' sizes)" if bound else "estimated bytes"


def _above_dram(gbps: float, copy_gbps: float, bound: bool) -> str:
    return (f"its {_bytes_what(bound)} at the measured time would be {gbps:,.0f} GB/s, above the DRAM copy bandwidth "
            f"({copy_gbps:,.0f} GB/s): part of its data came from the L2 (written just before by the kernel before "
            f"it) or the estimate is high; the store has no L2 ceiling (kinspect capture --time measures one), so no "
            f"% of bandwidth and no ideal time from bytes")


_BEATS_IDEAL = ("it ran faster than its ideal time at DRAM bandwidth: part of its data came from L2, or its byte "
                "estimate is high (--counters measures the bytes); headroom 0")


def _headroom(gpu_ms: float, ideal: float | None) -> float | None:
    """GPU time minus ideal, never below 0 (a kernel faster than its DRAM ideal read from L2)."""
    return None if ideal is None else max(0.0, gpu_ms - ideal)


def kernel_speeds(variants: list[Variant], ceilings: Ceilings | None,
                  floor_us: float | None = None) -> dict[str, Speed]:
    """One Speed per kernel name: its timed variants' figures summed (per call: the mean over calls)."""
    by_kernel: dict[str, list[Speed]] = {}
    for v in variants:
        s = variant_speed(v, ceilings, floor_us)
        if s is not None:
            by_kernel.setdefault(v.kernel, []).append(s)
    return {k: combine(k, ss, ceilings) for k, ss in by_kernel.items()}


def combine(kernel: str, speeds: list[Speed], ceilings: Ceilings | None) -> Speed:
    """Several variants of one kernel as one: sums, and means per call weighted by their calls; the ideal
    time is the sum of theirs (each variant's own dot type decides its compute ceiling)."""
    if len(speeds) == 1:
        return speeds[0]
    calls = sum(s.timed_calls for s in speeds)
    gpu_ms = sum(s.gpu_ms or 0.0 for s in speeds)

    def per_call(values) -> float | None:
        values = list(values)
        if any(x is None for x, _ in values) or not calls:
            return None
        return sum(x * n for x, n in values) / calls

    bytes_per_call = per_call((s.bytes_per_call, s.timed_calls) for s in speeds)
    flops = per_call((s.flops_per_call, s.timed_calls) for s in speeds) if any(s.flops_per_call for s in speeds) \
        else None
    s = _figures(kernel, gpu_ms, calls, bytes_per_call, " + ".join(sorted({s.bytes_method for s in speeds} - {""})),
                 any(s.upper_bound for s in speeds), flops, "", ceilings,
                 tuple(dict.fromkeys(n for s in speeds for n in s.notes)))
    if all(x.ideal_ms is not None for x in speeds):
        from dataclasses import replace

        ideal = sum(x.ideal_ms for x in speeds)
        bound_by = max(speeds, key=lambda x: x.ideal_ms).bound_by
        notes = s.notes + (_BEATS_IDEAL,) if ideal > gpu_ms and _BEATS_IDEAL not in s.notes else s.notes
        s = replace(s, ideal_ms=ideal, headroom_ms=_headroom(gpu_ms, ideal), bound_by=bound_by, notes=notes)
    return s


@dataclass(frozen=True)
class ProgramSpeed:
    gpu_ms: float             # every timed kernel's GPU time
    ideal_ms: float | None    # the sum of the ideal times of the kernels that have one
    headroom_ms: float | None
    covered_ms: float         # GPU time of the kernels with an ideal time

    def to_json(self) -> dict:
        return {"gpu_ms": round(self.gpu_ms, 4), "ideal_ms": _round(self.ideal_ms, 4),
                "headroom_ms": _round(self.headroom_ms, 4), "gpu_ms_with_ideal": round(self.covered_ms, 4)}


def program_speed(speeds) -> ProgramSpeed:
    speeds = list(speeds)
    gpu = sum(s.gpu_ms or 0.0 for s in speeds)
    with_ideal = [s for s in speeds if s.ideal_ms is not None]
    ideal = sum(s.ideal_ms for s in with_ideal) if with_ideal else None
    covered = sum(s.gpu_ms or 0.0 for s in with_ideal)
    headroom = sum(s.headroom_ms for s in with_ideal) if with_ideal else None
    return ProgramSpeed(gpu_ms=gpu, ideal_ms=ideal, headroom_ms=headroom,
                        covered_ms=covered)


def by_headroom(speeds: dict[str, Speed]) -> list[str]:
    """Kernel names, most headroom first (kernels without an ideal time last, by GPU time)."""
    return sorted(speeds, key=lambda k: (speeds[k].headroom_ms is None, -(speeds[k].headroom_ms or 0.0),
                                         -(speeds[k].gpu_ms or 0.0), k))


@dataclass(frozen=True)
class ProgramSol:
    """A program's kernels against the ceilings its store keeps (or what was used instead, said)."""

    speeds: dict                  # kernel name -> Speed
    total: ProgramSpeed
    ceilings: Ceilings | None
    ceilings_note: str            # which ceilings, measured where and when; or why there are none
    triton_ms: float = 0.0        # the program's Triton kernels' GPU time, autotuners' benchmarks apart
    others: object = None         # kinspect.files.gpu_time.Others: the GPU work no launch hook saw
    tuning_ms: float = 0.0        # Triton launches inside autotuners' benchmarks
    ranks: object = None          # kinspect.analysis.ranks.RankSpread: a program of several ranks
    call_sites: dict = field(default_factory=dict)   # kernel -> [kinspect.analysis.callsites.SiteCost]
    variants: dict = field(default_factory=dict)     # kernel -> [kinspect.analysis.variants.VariantWhy] (2 or more)
    floor_us: float | None = None     # the least GPU time per launch the ideal times allow
    floor_note: str = ""              # where that floor comes from

    def to_json(self) -> dict:
        c = self.ceilings
        out = {**self.total.to_json(), "ceilings": None if c is None else {**c.to_json(), "source": c.source},
               "ceilings_note": self.ceilings_note, "launch_floor_us": self.floor_us, "launch_floor_note": self.floor_note,
               "ranked_by_headroom": by_headroom(self.speeds),
               "triton_share_of_gpu_time": None, "largest_other_kernels": None, "share_window": None,
               "communication_kernels": None, "tuning_gpu_ms": round(self.tuning_ms, 4) if self.tuning_ms else None,
               "tuning_other_kernels": None, "ranks": self.ranks.to_json() if self.ranks is not None else None,
               "compiled_while_running": {k: [w.to_json() for w in ws if w.while_running]
                                          for k, ws in self.variants.items() if any(w.while_running for w in ws)}}
        o = self.others
        if o is not None and self.triton_ms + o.ms > 0:
            comm = o.communication
            out["triton_share_of_gpu_time"] = round(self.triton_ms / (self.triton_ms + o.ms), 4)
            out["largest_other_kernels"] = [{"name": n, **k} for n, k in o.kernels.items() if n not in comm][:5]
            out["communication_kernels"] = [{"name": n, **k} for n, k in comm.items()][:5]
            out["share_window"] = o.window or None
        if o is not None and o.tuning:
            out["tuning_gpu_ms"] = round(self.tuning_ms + o.tuning_ms, 4)
            out["tuning_other_kernels"] = [{"name": n, **k} for n, k in o.tuning.items()][:5]
        return out


def for_program(variants: list[Variant], device: str | None = None) -> ProgramSol:
    """Every timed kernel's Speed, against the ceilings of the store the variants are in (else those of
    this machine, or the datasheet of the GPU `device` names: kinspect.files.ceilings.for_store). GB/s
    need only bytes and GPU time: they are there with no ceilings at all."""
    from pathlib import Path

    from kinspect.files import ceilings, gpu_time

    roots = list(dict.fromkeys(Path(v.path).parent.parent for v in variants if v.path))
    root = next((r for r in roots if ceilings.read(r) is not None), roots[0] if roots else None)
    found, note = ceilings.for_store(root, device)
    floor, floor_note = launch_floor(variants, found)
    speeds = kernel_speeds(variants, found, floor)
    triton = sum(v.launches.gpu.total_ms for v in variants if v.launches is not None and v.launches.gpu)
    tuning = sum(v.launches.tuning_ms for v in variants if v.launches is not None)
    others = gpu_time.read_others(root) if root is not None else None
    if others is not None and not others.tuning:
        # a store from before kinspect kept what ran inside autotuners' benchmarks apart: their Triton
        # launches count in the share as they did then, since the others hold their L2 flushes too
        triton += tuning
    return ProgramSol(speeds, program_speed(speeds.values()), found, note, triton_ms=triton, others=others, floor_us=floor,
                      floor_note=floor_note, tuning_ms=tuning, ranks=_ranks(variants, root),
                      call_sites=_call_sites(variants), variants=_variants(variants))


def _variants(variants: list[Variant]) -> dict:
    from kinspect.analysis.variants import explain, first_step_end, step_launches

    by_kernel: dict = {}
    for v in variants:
        by_kernel.setdefault(v.kernel, []).append(v)
    warm, per_step = first_step_end(variants), step_launches(variants)
    return {k: found for k, vs in by_kernel.items() if (found := explain(vs, warm, per_step))}


def _call_sites(variants: list[Variant]) -> dict:
    from kinspect.analysis.callsites import call_sites

    by_kernel: dict = {}
    for v in variants:
        by_kernel.setdefault(v.kernel, []).append(v)
    return {k: found for k, vs in by_kernel.items() if (found := call_sites(vs))}


def _ranks(variants: list[Variant], root):
    from kinspect.analysis.ranks import rank_spread, ranks_of

    if len(ranks_of(variants)) < 2:
        return None
    decisions = ()
    if root is not None:
        from kinspect.files.store import read_autotune

        try:
            decisions = tuple(read_autotune(root))
        except Exception:       # the decisions are a note; the spread stands without them
            decisions = ()
    return rank_spread(variants, decisions)


def launch_floor(variants: list[Variant], found: Ceilings | None) -> tuple[float | None, str]:
    """The least GPU time per launch an ideal time allows (µs), and a line saying where it comes from:
    the device's measured floor, else the shortest launch this capture timed."""
    if found is not None and found.launch_floor_us:
        return found.launch_floor_us, (f"each launch takes at least {found.launch_floor_us:.2f} µs: the device's "
                                       f"measured floor (a one-block copy launched back to back in a CUDA graph)")
    shortest = None
    for v in variants:
        gpu = v.launches.gpu if v.launches is not None else None
        if gpu is None or not gpu.calls:
            continue
        us = 1e3 * (min(gpu.samples_ms) if gpu.samples_ms else gpu.total_ms / gpu.calls)
        if us > 0 and (shortest is None or us < shortest[0]):
            shortest = (us, v.kernel)
    if shortest is None:
        return None, "no per-launch floor: no launch was timed"
    return shortest[0], (f"each launch takes at least {shortest[0]:.2f} µs: the shortest launch this capture timed "
                         f"({shortest[1]}; the store has no measured floor of its device: kinspect capture --time "
                         f"records one)")
