"""Fuzz every reader of untrusted input: each dialect parser, the metadata/record readers, the ELF reader.

    python benchmarks/fuzz_parsers.py [--n 10000] [--seed 0] [--only ptx,sass] [--save DIR]

Seeds are real stages: fresh offline compiles (cuda:90, cuda:80, hip:gfx942) of shipped kernels,
the triton-cpu / triton-shared fixtures, and RISC-V assembly made from the triton-shared IR with
llvmlite. Each input is a seed mutated by a few random operations: truncation, byte flips, inserted
binary junk / NULs / invalid UTF-8, huge lines (MBs), repeated and deleted lines, digit runs swapped
for extreme numbers, deep nesting, odd line separators, splices of another dialect.

A crash is any exception other than a KinspectError (kinspect's own located errors), or an input
that runs past --timeout seconds. Prints one row per target (inputs, crashes, located errors, the
slowest input) and exits 1 when anything crashed. tests/ir/test_fuzz_small.py runs the same targets
on fewer inputs in CI.
"""

from __future__ import annotations

import argparse
import io
import json
import random
import signal
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
CPU_FIXTURES = ROOT / "tests" / "fixtures" / "cpu"

# dialect parsers fed as text; the record readers and the ELF reader take bytes through a file
DIALECTS = ("mlir", "llvm", "ptx", "sass", "amdgcn", "riscv", "x86", "aarch64")
SLOW_MS = 1000.0   # an input slower than this is flagged (a pathological regex, quadratic work)


# -- seeds --------------------------------------------------------------------------------------

SEED_VARIANTS = (("add", "cuda:90", {}), ("softmax", "cuda:90", {}), ("fused_mm_softmax", "cuda:90", {"BLOCK_SIZE": 32}),
                 ("matmul", "cuda:80", {}), ("softmax", "hip:gfx942", {}), ("fused_mm_softmax", "hip:gfx942", {"BLOCK_SIZE": 32}))


def compile_seeds(work: Path) -> list:
    """Fresh offline compiles of SEED_VARIANTS into a store under `work`."""
    from kinspect import api

    return [api.dump(k, target=t, constexprs=c, out_dir=work / "store").variant for k, t, c in SEED_VARIANTS]


def collect_seeds(variants) -> dict[str, list[bytes]]:
    """{target name: [seed bytes]} from real compiler output: the stages of `variants` (stored
    kinspect variants) and the CPU-backend fixtures."""
    seeds: dict[str, list[bytes]] = {k: [] for k in (*DIALECTS, "sass-usage", "record", "metadata", "elf", "options",
                                                     "source", "autotune")}
    for v in variants:
        seeds["record"].append(Path(v.path, "record.json").read_bytes())
        if Path(v.path, "source.json").is_file():
            seeds["source"].append(Path(v.path, "source.json").read_bytes())
        for s in v.stages:
            data = Path(v.path, s.file).read_bytes()
            if s.binary and s.name in ("cubin", "hsaco"):
                seeds["elf"].append(data)
            elif s.name == "json":
                seeds["metadata"].append(data)
            elif s.dialect in seeds and not s.binary:
                seeds[s.dialect].append(data)
        if v.stage("cubin"):
            usage = _resource_usage(Path(v.path, v.stage("cubin").file))
            if usage:
                seeds["sass-usage"].append(usage)
    if str(ROOT) not in sys.path:           # the test helpers: run as a script from anywhere
        sys.path.insert(0, str(ROOT))
    from tests.helpers import sections

    for asm in sorted(CPU_FIXTURES.glob("triton-cpu-*/*.asm")):
        parts = sections(asm)
        seeds["llvm"].append(parts.get("LLVM IR", "").encode())
        seeds["x86" if "x86" in asm.parent.name else "aarch64"].append(parts.get("ASM", "").encode())
    shared = CPU_FIXTURES / "triton-shared-riscv-softmax"
    for name in ("tt.mlir", "ttshared.mlir", "ll.mlir"):
        seeds["mlir"].append((shared / name).read_bytes())
    for name in ("ll.ir", "ll.opt.O2.ir"):
        seeds["llvm"].append((shared / name).read_bytes())
    seeds["riscv"] += _riscv((shared / "ll.ir").read_text())
    seeds["autotune"].append(_autotune_seed())
    seeds["options"] += [b"BLOCK_SIZE=64", b"x_ptr=*fp32", b"n=i32:4096", b"y=fp16:0.5", b"BLOCK=32,64,128",
                         b"spacemit-x60", b"riscv64:+v,+zvl256b", b"x86-64-v4:+avx512f", b"4,8", b"S=True"]
    empty = [k for k, v in seeds.items() if not any(v)]
    if empty:
        raise SystemExit(f"no seeds for {', '.join(empty)}")
    return seeds


def _resource_usage(cubin: Path) -> bytes | None:
    """`cuobjdump --dump-resource-usage` text of a real cubin (the wheel ships cuobjdump)."""
    import importlib.util
    import subprocess

    tool = Path(importlib.util.find_spec("triton").origin).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
    if not tool.exists():
        return None
    proc = subprocess.run([str(tool), "--dump-resource-usage", str(cubin)], capture_output=True, timeout=60)
    return proc.stdout if proc.returncode == 0 else None


def _riscv(llir: str) -> list[bytes]:
    from kinspect.backends import retarget

    return [retarget.compile_ir(llir, retarget.parse(cpu)).asm.encode() for cpu in ("spacemit-x60", "generic-rv64")]


# -- mutations -----------------------------------------------------------------------------------

JUNK = (b"\x00", b"\x7fELF\x02\x01\x01\x00", b"\xff\xfe", b"\xc3", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80",
        b"\r", b"\x0b", b"\x0c", b"\x1c", b"\xc2\x85", b"\xe2\x80\xa8", b"\t" * 64, b"\x1b[31m")
NUMBERS = (b"0", b"-1", b"-0", b"18446744073709551616", b"9" * 60, b"0x", b"0xffffffffffffffff", b"1e999", b"nan",
           b"00000000000000000000001", b"-2147483649")
NEST = (b"loc(", b"callsite(", b"fused[", b"(", b"<", b"{", b"[", b"!{", b"#loc = loc(")


MAX_INPUT = 8 << 20   # stacked mutations: keep an input under 8 MB


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True) or [b""]


def truncate(rng: random.Random, data: bytes, _) -> bytes:
    return data[:rng.randrange(len(data) + 1)]


def flip(rng: random.Random, data: bytes, _) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 16)):
        if b:
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
    return bytes(b)


def junk(rng: random.Random, data: bytes, _) -> bytes:
    at = rng.randrange(len(data) + 1)
    piece = rng.choice(JUNK) * rng.randint(1, 8) if rng.random() < 0.7 else rng.randbytes(rng.randint(1, 256))
    return data[:at] + piece + data[at:]


def huge_line(rng: random.Random, data: bytes, _) -> bytes:
    """A line of 0.25-2 MB: a real line repeated without newlines, one character, or nesting."""
    lines = _lines(data)
    at = rng.randrange(len(lines))
    size = rng.randint(1 << 18, 2 << 20)
    unit = rng.choice([lines[at].rstrip(b"\r\n") or b"x", bytes([rng.randrange(32, 127)]), rng.choice(NEST),
                       b"%r1, ", b"loc(#loc1) ", b'"\\"', b"/*0000*/ "])
    return b"".join(lines[:at]) + unit * (size // len(unit) + 1) + b"\n" + b"".join(lines[at:])


def nest(rng: random.Random, data: bytes, _) -> bytes:
    """Deep nesting on one line: recursive-descent parsers must not blow the stack."""
    lines = _lines(data)
    at = rng.randrange(len(lines))
    depth = rng.choice((50, 2000, 20000))
    opener = rng.choice(NEST)
    line = lines[at].rstrip(b"\r\n")
    closer = {b"(": b")", b"<": b">", b"{": b"}", b"[": b"]"}.get(opener[-1:], b")")
    return b"".join(lines[:at]) + line + opener * depth + closer * rng.choice((0, depth)) + b"\n" + b"".join(lines[at:])


def repeat_lines(rng: random.Random, data: bytes, _) -> bytes:
    lines = _lines(data)
    a = rng.randrange(len(lines))
    b = min(len(lines), a + rng.randint(1, 20))
    times = min(rng.randint(2, 200), MAX_INPUT // max(1, sum(map(len, lines[a:b]))))
    return b"".join(lines[:b] + lines[a:b] * times + lines[b:])


def delete_lines(rng: random.Random, data: bytes, _) -> bytes:
    lines = _lines(data)
    a = rng.randrange(len(lines))
    return b"".join(lines[:a] + lines[a + rng.randint(1, max(1, len(lines) // 4)):])


def shuffle_lines(rng: random.Random, data: bytes, _) -> bytes:
    lines = _lines(data)
    a = rng.randrange(len(lines))
    chunk = lines[a:a + rng.randint(2, 50)]
    rng.shuffle(chunk)
    return b"".join(lines[:a] + chunk + lines[a + len(chunk):])


def numbers(rng: random.Random, data: bytes, _) -> bytes:
    import re

    runs = [m.span() for m in re.finditer(rb"\d+", data)]
    for _ in range(rng.randint(1, 8)):
        if runs:
            a, b = rng.choice(runs)
            data = data[:a] + rng.choice(NUMBERS) + data[b:]
            runs = [m.span() for m in re.finditer(rb"\d+", data)] if rng.random() < 0.3 else runs
    return data


def window(rng: random.Random, data: bytes, _) -> bytes:
    lines = _lines(data)
    a = rng.randrange(len(lines))
    return b"".join(lines[a:a + rng.randint(1, 400)])


def splice(rng: random.Random, data: bytes, other: bytes) -> bytes:
    """A piece of another seed (often another dialect) inside this one."""
    piece = window(rng, other, None)
    at = rng.randrange(len(data) + 1)
    return data[:at] + piece + data[at:]


# (mutation, weight): huge lines are rare because each costs MBs of parsing
MUTATIONS: tuple[tuple[Callable, int], ...] = (
    (truncate, 10), (flip, 10), (junk, 10), (huge_line, 1), (nest, 3), (repeat_lines, 6), (delete_lines, 6),
    (shuffle_lines, 4), (numbers, 8), (window, 12), (splice, 5))


def mutate(rng: random.Random, seed: bytes, pool: list[bytes]) -> bytes:
    funcs, weights = zip(*MUTATIONS)
    return apply(seed, [(f, rng.randrange(2**32)) for f in rng.choices(funcs, weights, k=rng.randint(1, 4))], pool)


def apply(data: bytes, steps, pool: list[bytes]) -> bytes:
    """Mutations in turn: each step a (mutation, random seed); the input stays under MAX_INPUT."""
    for f, n in steps:
        rng = random.Random(n)
        data = f(rng, data, rng.choice(pool))[:MAX_INPUT]
    return data


# -- targets: bytes in, KinspectError or nothing out ----------------------------------------------

def _as_lines(data: bytes, i: int):
    """Half the inputs as a file's line iterator (what vec-report streams), half as one str."""
    text = data.decode("utf-8", "replace")
    return io.StringIO(text, newline="") if i % 2 else text


def dialect_target(dialect: str) -> Callable[[bytes, int, Path], None]:
    def run(data: bytes, i: int, tmp: Path) -> None:
        from kinspect import ir
        from kinspect.analysis.metrics import measure
        from kinspect.diff.normalize import normalize

        lines = _as_lines(data, i)
        measure(dialect, dialect, ir.parse(dialect, lines), gpu=dialect in ("sass", "ptx", "amdgcn"))
        normalize(io.StringIO(data.decode("utf-8", "replace"), newline=""), dialect, names=("kernel",))
        if dialect == "llvm":
            ir.parser("llvm").target_triple(_as_lines(data, i))
        if dialect in ("riscv", "x86", "aarch64"):
            from kinspect.isa.detect import isa_of_asm, triple_of

            isa_of_asm(_as_lines(data, i + 1))
            triple_of(io.StringIO(data.decode("utf-8", "replace"), newline=""))

    return run


def sass_usage(data: bytes, i: int, tmp: Path) -> None:
    from kinspect.ir.sass import parse_resource_usage

    for _ in parse_resource_usage(_as_lines(data, i)):
        pass


def record(data: bytes, i: int, tmp: Path) -> None:
    """A kinspect store's record.json, read as `ls`/`show` read it."""
    from kinspect.files.store import read_record

    folder = tmp / f"r{i}"
    folder.mkdir()
    (folder / "record.json").write_bytes(data)
    read_record(folder)


def source(data: bytes, i: int, tmp: Path) -> None:
    """A variant's source.json (the kernel source a replay rebuilds), read as replays read it."""
    from kinspect.replay.spec import read_source

    folder = tmp / f"s{i}"
    folder.mkdir()
    (folder / "source.json").write_bytes(data)
    read_source(folder)


def autotune(data: bytes, i: int, tmp: Path) -> None:
    """A kernel's autotune.json, read as the capture summary reads it."""
    from kinspect.files.store import read_autotune

    folder = tmp / f"a{i}" / "kernel"
    folder.mkdir(parents=True)
    (folder / "autotune.json").write_bytes(data)
    read_autotune(folder.parent)


def _autotune_seed() -> bytes:
    """An autotune.json as capture writes it: a decision with timings per config."""
    from kinspect.core.model import AutotuneDecision, ConfigTiming, TunedConfig

    configs = [TunedConfig({"BLOCK": b}, {"num_warps": w, "num_stages": 3}) for b, w in ((64, 2), (128, 4))]
    d = AutotuneDecision(kernel="k", key=(4096, "torch.float16"), key_names=("n",), best=configs[0],
                         timings=(ConfigTiming(configs[0], (0.01, 0.009, 0.011)), ConfigTiming(configs[1], (), True)),
                         how="benchmarked", bench_s=0.5, configs=2, pid=1, host="h")
    return json.dumps([d.to_json()], indent=1).encode()


def metadata(data: bytes, i: int, tmp: Path) -> None:
    """A Triton cache entry's metadata json, read as `ls CACHE` reads it."""
    from kinspect.files.sources import discover

    folder = tmp / f"c{i}" / "HASH"
    folder.mkdir(parents=True)
    (folder / "__grp__k.json").write_text(json.dumps({"child_paths": {}}))
    (folder / "k.json").write_bytes(data)
    (folder / "k.ptx").write_text(".version 8.7\n.target sm_90a\n")
    discover(folder.parent)


def elf(data: bytes, i: int, tmp: Path) -> None:
    """The ELF section reader (code size of a cubin/hsaco/.so)."""
    from kinspect.isa.elf import text_bytes

    path = tmp / f"e{i}.cubin"
    path.write_bytes(data)
    size = text_bytes(path)
    assert size is None or size >= 0


def options(data: bytes, i: int, tmp: Path) -> None:
    """-p, --arg, sweep lists and --retarget specs as a user types them."""
    from kinspect.backends import retarget
    from kinspect.compile.args import parse_args, parse_constexprs, parse_int_list, parse_sweep

    text = data.decode("utf-8", "replace")[:10_000]
    for f in (lambda: parse_constexprs([text]), lambda: parse_args([text]), lambda: parse_sweep([text]),
              lambda: parse_int_list(text, "--num-warps"), lambda: retarget.parse(text)):
        try:
            f()
        except _ALLOWED:
            pass


def _allowed():
    from kinspect.core.errors import KinspectError

    return (KinspectError,)


_ALLOWED: tuple = ()

TARGETS: dict[str, Callable[[bytes, int, Path], None]] = {
    **{d: dialect_target(d) for d in DIALECTS}, "sass-usage": sass_usage, "record": record,
    "metadata": metadata, "elf": elf, "options": options, "source": source, "autotune": autotune}


# -- the run ---------------------------------------------------------------------------------------

class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang()


@dataclass
class Row:
    target: str
    inputs: int = 0
    crashes: int = 0
    located: int = 0
    slowest_ms: float = 0.0
    slowest_bytes: int = 0
    seconds: float = 0.0
    first: dict = field(default_factory=dict)    # crash signature -> (traceback, input)


def _signature(e: BaseException) -> str:
    tb = traceback.extract_tb(e.__traceback__)
    frame = next((f for f in reversed(tb) if "/kinspect/" in f.filename), tb[-1] if tb else None)
    where = f"{Path(frame.filename).name}:{frame.lineno}" if frame else "?"
    return f"{type(e).__name__} at {where}"


def fuzz_one(name: str, data: bytes, i: int, tmp: Path, timeout: float) -> tuple[str | None, float, BaseException | None]:
    """('located' | None | crash signature, seconds, exception) for one input."""
    run = TARGETS[name]
    if timeout:
        signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, timeout)
    t = time.perf_counter()
    try:
        run(data, i, tmp)
        outcome, exc = None, None
    except _ALLOWED:
        outcome, exc = "located", None
    except (Exception, RecursionError, Hang) as e:
        outcome, exc = _signature(e), e
    finally:
        if timeout:
            signal.setitimer(signal.ITIMER_REAL, 0)
    return outcome, time.perf_counter() - t, exc


def fuzz(seeds: dict[str, list[bytes]], n: int, seed: int, names, timeout: float, save: Path | None,
         progress=None) -> list[Row]:
    global _ALLOWED
    _ALLOWED = _allowed()
    rows = []
    every = [s for v in seeds.values() for s in v]
    for name in names:
        rng = random.Random(f"{seed}:{name}")
        row = Row(name)
        started = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix=f"kinspect-fuzz-{name}-") as tmp:
            for i in range(n):
                base = rng.choice(seeds[name])
                # every 50th input is an unmutated seed: the real stage must parse
                data = base if i % 50 == 0 else mutate(rng, base, seeds[name] if rng.random() < 0.7 else every)
                outcome, seconds, exc = fuzz_one(name, data, i, Path(tmp), timeout)
                row.inputs += 1
                if seconds * 1000 > row.slowest_ms:
                    row.slowest_ms, row.slowest_bytes = seconds * 1000, len(data)
                    if save and seconds * 1000 > SLOW_MS:
                        save.mkdir(parents=True, exist_ok=True)
                        (save / f"{name}-slowest.bin").write_bytes(data)
                if outcome == "located":
                    row.located += 1
                elif outcome is not None:
                    row.crashes += 1
                    if outcome not in row.first:
                        row.first[outcome] = ("".join(traceback.format_exception(exc)), data)
                        if save:
                            save.mkdir(parents=True, exist_ok=True)
                            (save / f"{name}-{len(row.first)}.bin").write_bytes(data)
                if progress and (i + 1) % 1000 == 0:
                    progress(f"  {name}: {i + 1}/{n}")
        row.seconds = time.perf_counter() - started
        rows.append(row)
        if progress:
            progress(format_row(row))
    return rows


HEADER = f"{'parser':<11} {'inputs':>7} {'crashes':>7} {'located':>8} {'slowest ms':>11} {'(bytes)':>10} {'total s':>8}"


def format_row(r: Row) -> str:
    flag = "  SLOW" if r.slowest_ms > SLOW_MS else ""
    return (f"{r.target:<11} {r.inputs:>7,} {r.crashes:>7} {r.located:>8,} {r.slowest_ms:>11.1f} "
            f"{r.slowest_bytes:>10,} {r.seconds:>8.1f}{flag}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=10_000, help="inputs per parser (default 10000)")
    ap.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    ap.add_argument("--only", default=None, help=f"comma-separated targets, of: {', '.join(TARGETS)}")
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds before an input counts as a hang")
    ap.add_argument("--save", type=Path, default=None,
                    help="write the first input of each crash, and the slowest input when over 1 s, here")
    a = ap.parse_args(argv)
    names = [x.strip() for x in a.only.split(",")] if a.only else list(TARGETS)
    unknown = [x for x in names if x not in TARGETS]
    if unknown:
        ap.error(f"unknown target(s) {', '.join(unknown)}; known: {', '.join(TARGETS)}")
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))
    with tempfile.TemporaryDirectory(prefix="kinspect-fuzz-seeds-") as work:
        t = time.perf_counter()
        seeds = collect_seeds(compile_seeds(Path(work)))
        print(f"seeds: {sum(map(len, seeds.values()))} real stages in {time.perf_counter() - t:.0f} s "
              f"({', '.join(f'{k} {len(v)}' for k, v in seeds.items())})", file=sys.stderr)
        print(HEADER, file=sys.stderr)
        rows = fuzz(seeds, a.n, a.seed, names, a.timeout, a.save, progress=lambda s: print(s, file=sys.stderr))
    print("\n".join([HEADER, *map(format_row, rows)]))
    total = sum(r.crashes for r in rows)
    print(f"total: {sum(r.inputs for r in rows):,} inputs, {total} crash(es), "
          f"{sum(r.located for r in rows):,} located errors; slowest "
          f"{max(r.slowest_ms for r in rows):.0f} ms ({max(rows, key=lambda r: r.slowest_ms).target})")
    for r in rows:
        for sig, (tb, data) in r.first.items():
            print(f"\n== {r.target}: {sig} (input {len(data):,} bytes)\n{tb}", file=sys.stderr)
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
