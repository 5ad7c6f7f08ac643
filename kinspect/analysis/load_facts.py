"""What the compiler knows of each global load, read from the TTGIR, and why a load is narrow.

The TTGIR states it exactly: a load of one element has a scalar pointer (`!tt.ptr<f32>`), a load of a
block a tensor of pointers (`tensor<64x!tt.ptr<f32>, #blocked>`); the block's layout gives the
elements each thread holds (`sizePerThread` along the layout's fastest dimension, `order[0]`), over
`threadsPerWarp` x `warpsPerCTA` threads; an async copy carries the contiguity the compiler proved;
the kernel's arguments carry `tt.divisibility` where the JIT proved a pointer 16-byte aligned or an
int a multiple of 16. Each load's line is its own location (an inlined helper's load is on the
kernel's line that calls the helper, the helper's line kept beside it).

Triton's coalescing pass gives each thread min(16 bytes, what the axis analysis proved contiguous and
aligned, the block's elements / the threads) elements; the lowering then loads at most what the
pointer's and the mask's proven alignment allow. So a narrow load has one of three causes, told
apart here: too few elements per thread for the block and warps, contiguity or alignment the
compiler could not prove (the layout or the lowering cut it), or an element type that makes a wide
load out of few elements.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from math import prod
from typing import Callable

from kinspect.analysis.metrics import StageMetrics
from kinspect.ir.records import MemoryOp

VECTOR_BITS = 128      # the widest load one thread issues (LDG.E.128, global_load_dwordx4, 16-byte cp.async)

# #blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
BLOCKED_RE = re.compile(r"sizePerThread\s*=\s*\[(?P<spt>[\d,\s]+)\],\s*threadsPerWarp\s*=\s*\[(?P<tpw>[\d,\s]+)\],"
                        r"\s*warpsPerCTA\s*=\s*\[(?P<wpc>[\d,\s]+)\],\s*order\s*=\s*\[(?P<order>[\d,\s]+)\]")

TYPE_NAMES = {8: "8-bit", 16: "16-bit", 32: "32-bit", 64: "64-bit"}


@dataclass(frozen=True)
class Blocked:
    """A `#ttg.blocked` layout: elements per thread, threads per warp, warps, fastest dimension first."""

    size_per_thread: tuple[int, ...]
    threads_per_warp: tuple[int, ...]
    warps: tuple[int, ...]
    order: tuple[int, ...]

    @property
    def threads(self) -> int:
        return prod(self.threads_per_warp) * prod(self.warps)

    @property
    def fastest(self) -> int:
        return self.order[0]

    @property
    def per_thread(self) -> int:
        """Contiguous elements each thread holds along the fastest dimension."""
        return self.size_per_thread[self.fastest]


def blocked(m: StageMetrics, encoding: str) -> Blocked | None:
    found = BLOCKED_RE.search(m.layout_text.get(encoding, ""))
    if found is None:
        return None
    dims = [tuple(int(x) for x in found[k].split(",")) for k in ("spt", "tpw", "wpc", "order")]
    if len({len(d) for d in dims}) != 1:
        return None
    return Blocked(*dims)


@dataclass(frozen=True)
class LoadLine:
    """The global loads the TTGIR puts on one kernel line."""

    file: str
    line: int
    ops: tuple[MemoryOp, ...]
    helper_lines: tuple[int, ...] = ()       # lines of inlined helpers (in the kernel's file) they come from

    @property
    def scalar(self) -> bool:
        """Every load of the line reads one element (a scalar pointer, or a tensor of one)."""
        return all(op.one_element for op in self.ops)


def load_lines(m: StageMetrics, kernel_file: Callable[[str], bool]) -> dict[tuple[str, int, tuple], LoadLine]:
    """The kernel lines of an MLIR stage's global loads, by their own locations: (file, kernel line,
    the lines of the inlined helpers under it) -> its loads. A helper's loads at one call are told apart
    by their lines in it (its 128-bit tiles and its 32-bit row statistics are two findings, not one)."""
    found: dict[tuple[str, int, tuple], list[MemoryOp]] = {}
    for op in m.memory_ops:
        if op.loc is not None and kernel_file(op.loc.file):
            found.setdefault((op.loc.file, op.loc.line, op.loc.helper_lines), []).append(op)
    return {key: LoadLine(key[0], key[1], tuple(ops), key[2]) for key, ops in found.items()}


def layout_stage(stages) -> StageMetrics | None:
    """The MLIR stage whose loads carry layouts (the TTGIR), latest first; or a TTGIR with no layout at
    all, whose loads are then all of one element (a kernel of scalar loads only: FastVideo's
    map_to_index_kernel, a loop of `tl.load(base + i * stride)`)."""
    stages = list(stages)
    for m in reversed(stages):
        if m.dialect == "mlir" and m.memory_ops and m.layout_text:
            return m
    for m in reversed(stages):
        if m.dialect == "mlir" and m.memory_ops and m.stage == "ttgir":
            return m
    return None


def async_width(op: MemoryOp, layout: Blocked | None) -> int | None:
    """Bits one async copy (cp.async / LDGSTS) moves: the contiguity the compiler recorded on it, else
    the layout's elements per thread, times the element width, at most 16 bytes."""
    n = op.contiguity or (layout.per_thread if layout else None)
    if n is None or not op.elem_bits:
        return None
    return min(n * op.elem_bits, VECTOR_BITS)


@dataclass(frozen=True)
class Cause:
    """Why a load is narrower than 16 bytes a thread, in the variant's numbers."""

    kind: str          # few_elements | unproven | element_type | unknown
    text: str
    advice: str = ""


def narrow_cause(op: MemoryOp, m: StageMetrics, widest: int, constexprs: dict) -> Cause:
    """The cause of a tensor load whose narrowest instruction moves `widest` bits a thread (less than 16
    bytes), told apart in the order the compiler applies the limits: what the lowering could not prove
    (it loads less than the layout gives a thread), what the coalescer could not prove (it gave a
    thread fewer elements than the block has for it), then the block's elements over the threads."""
    layout = blocked(m, op.encoding)
    bits = max(op.elem_bits, 8) if op.elem_bits else None       # i1 is stored and loaded as bytes
    warps = prod(layout.warps) if layout else m.resources.get("num_warps")
    threads = layout.threads if layout else (warps or 0) * m.resources.get("threads_per_warp", 32)
    if not bits or not op.shape or not threads:
        return Cause("unknown", "the TTGIR does not say how its elements are spread over the threads")
    if bits >= VECTOR_BITS:
        return Cause("element_type", f"one {bits}-bit element is already 16 bytes")
    need = VECTOR_BITS // bits
    total = prod(op.shape)
    each = total / threads
    ptr_unaligned, mask_unaligned, runtime = _suspects(op, m)
    loaded = list(op.loaded_from)
    if layout is not None and widest < layout.per_thread * bits:
        spt = layout.per_thread
        why = _reasons(runtime, ptr_unaligned, mask_unaligned, loaded, need) or \
            "the alignment of its offsets or its mask is not proven"
        return Cause("unproven", f"the layout gives {spt} elements per thread ({spt * bits}-bit) but the loads are "
                     f"{widest}-bit: {why}", UNPROVEN_ADVICE)
    short = layout is not None and layout.per_thread < min(max(int(each), 1), need)
    if total < need * threads and not short:
        per = "one element per thread" if each <= 1 else f"{int(each)} elements per thread"
        text = (f"{total} elements over {threads} threads: {per} ({max(int(each), 1) * bits}-bit; 16 bytes take "
                f"{need} {TYPE_NAMES.get(bits, f'{bits}-bit')} elements)")
        return Cause("few_elements", text, _more_elements(op, layout, need, constexprs, warps, threads))
    if layout is None:
        kind = re_kind(m, op.encoding) or op.encoding.split("<")[0]
        return Cause("unknown", f"the compiler gave it the #{kind} layout of the values it meets, not a coalesced "
                     f"one; its elements per thread are not read here")
    spt = layout.per_thread
    why = _reasons(runtime, ptr_unaligned, [], loaded, need) or "the compiler's axis analysis proved no more"
    return Cause("unproven", f"the compiler proved {spt} contiguous aligned element(s) per thread ({spt * bits}-bit): "
                 f"{why}", UNPROVEN_ADVICE)


UNPROVEN_ADVICE = ("a unit stride the JIT can see (Triton specializes on a stride of 1), 16-byte aligned pointers and "
                   "sizes that are multiples of 16, or tl.max_contiguous / tl.multiple_of hints on the offsets")


def _reasons(runtime: list[str], ptr_unaligned: list[str], mask_unaligned: list[str], loaded: list[str],
             need: int) -> str:
    """What the compiler could not see, as facts of the TTGIR, likeliest first (which of them bound the
    load, the TTGIR does not say): values read from memory in the offsets, the mask's bounds, pointers
    and ints without 16-byte divisibility; runtime ints the JIT proved multiples of 16 are named only
    when nothing else is (they keep alignment, and break contiguity only as the fastest dimension's
    stride)."""
    reasons = []
    if loaded:
        reasons.append(f"its offsets use values loaded from {', '.join(loaded)} (their alignment is unknown)")
    if mask_unaligned:
        reasons.append(f"the mask uses {', '.join(mask_unaligned)}, not known a multiple of {need}")
    if ptr_unaligned:
        reasons.append(f"{', '.join(ptr_unaligned)} not known 16-byte aligned")
    odd = [r for r in runtime if "," in r]
    if odd or (runtime and not reasons):
        named = odd or runtime
        reasons.append(f"its offsets use runtime values ({('; ' if odd else ', ').join(named)}) the compiler cannot prove "
                       f"unit-stride")
    return "; ".join(reasons)


def re_kind(m: StageMetrics, encoding: str) -> str:
    found = re.match(r"#[\w.$-]+\s*=\s*#\w+\.(\w+)<", m.layout_text.get(encoding, ""))
    return found.group(1) if found else ""


def _suspects(op: MemoryOp, m: StageMetrics) -> tuple[list[str], list[str], list[str]]:
    """(pointer arguments not known 16-byte aligned, mask arguments not known multiples of 16, int
    arguments the offsets use): from the `tt.divisibility` the kernel's arguments carry."""
    params = {p.name: p for p in m.params.get(op.function, ())}
    ptr_unaligned, runtime = [], []
    for name in op.args:
        p = params.get(name)
        if p is None:
            continue
        if "ptr" in p.type:
            if (p.divisibility or 1) < 16:
                ptr_unaligned.append(name)
        else:
            runtime.append(name if (p.divisibility or 1) >= 16 else f"{name}, not a known multiple of 16")
    mask_unaligned = [n for n in op.mask_args if n in params and "ptr" not in params[n].type
                      and (params[n].divisibility or 1) < 16]
    return ptr_unaligned, mask_unaligned, runtime


def _more_elements(op: MemoryOp, layout: Blocked | None, need: int, constexprs: dict, warps: int,
                   threads: int) -> str:
    """What gives 16-byte loads: a longer block along the fastest dimension at these warps (named by the
    constexpr that has its size, where exactly one does), or fewer warps."""
    dim = layout.fastest if layout else len(op.shape) - 1
    size = op.shape[dim]
    across = prod(op.shape) // size
    want = -(-need * threads // across)
    want = 1 << (want - 1).bit_length()
    names = [k for k, v in constexprs.items() if type(v) is int and v == size]
    block = names[0] if len(names) == 1 else f"a block of {size}"
    out = f"{block} >= {want} at num_warps={warps} gives 16-byte loads where the elements are contiguous and aligned"
    fewer = prod(op.shape) // (need * threads // warps)
    if 1 <= fewer < warps:
        fewer = 1 << (fewer.bit_length() - 1)
        out += f" (as does num_warps={fewer} at {names[0]}={size})" if len(names) == 1 else \
            f" (as does num_warps={fewer})"
    return out
