"""Compile a variant's LLVM IR for another CPU, in-process, with llvmlite.

    target = retarget.parse("spacemit-x60")          # a preset, or "riscv64:+v,+zvl256b"
    out = retarget.compile_ir(llir_text, target)      # out.asm, out.remarks

The pipeline is what a CPU Triton backend runs after its llir stage: LLVM's O3 module pipeline
(which loop- and SLP-vectorizes for the target machine's vector width), then O3 code generation.
A preset may add LLVM options, as spine-triton's `-force-vector-width=32 -force-vector-interleave=2`.
The IR's own triple, data layout and per-function target-cpu/target-features are replaced, so
that the result shows what this CPU would get from the same IR.
"""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass, replace

from kinspect.core.errors import CompileError, UsageError, did_you_mean
from kinspect.core.optional import need



def binding(purpose: str = "--retarget"):
    """llvmlite.binding, or a one-line error saying what needed it and the extra that installs it
    (kinspect[retarget]; kinspect.core.optional)."""
    return need("llvmlite.binding", purpose)

RISCV = "riscv64-unknown-linux-gnu"
X86 = "x86_64-unknown-linux-gnu"
ARM = "aarch64-unknown-linux-gnu"

# LLVM options a target may set; every compile sets each one (to its default when the target
# does not), because llvmlite's options are process-wide and would otherwise leak between targets.
OPTION_DEFAULTS = {"force-vector-width": 0, "force-vector-interleave": 0}


@dataclass(frozen=True)
class CpuTarget:
    name: str
    triple: str
    cpu: str
    features: str = ""
    options: tuple[tuple[str, int], ...] = ()
    about: str = ""

    @property
    def isa(self) -> str:
        from kinspect.isa.detect import isa_of_triple

        return isa_of_triple(self.triple) or "unknown"

    @property
    def arch(self) -> str:
        return self.triple.split("-", 1)[0]

    def describe(self) -> str:
        """What the compile used, as llc/opt would be told: `riscv64 -mcpu=spacemit-x60 ...`."""
        parts = [self.arch, f"-mcpu={self.cpu}"]
        if self.features:
            parts.append(f"-mattr={self.features}")
        parts += [f"-{k}={v}" for k, v in self.options]
        return " ".join(parts)


SPINE_OPTIONS = (("force-vector-width", 32), ("force-vector-interleave", 2))
SPINE_MATTR = "+64bit,+a,+b,+c,+d,+f,+i,+m,+v,+zfh,+zvfh,+zicbop,+zicbom,+zicboz"
# LLVM 22 knows spacemit-x60 (RVA22 + V, Zvl256b, Zvfh, XSMTVDot) but no X100 (the K3's RVA23 core,
# RVV 1.0 with VLEN 256), A60 or A100 model. The nearest it can be told is the `rva23-vlen256` preset:
# those features on a generic core (generic scheduling; IME not assumed, SpacemiT does not say X100 has it).
X100_FEATURES = "+m,+a,+f,+d,+c,+v,+zvl256b,+zba,+zbb,+zbs,+zfh,+zvfh,+zicond,+zicbop,+zicbom,+zicboz"

PRESETS: dict[str, CpuTarget] = {t.name: t for t in (
    CpuTarget("spacemit-x60", RISCV, "spacemit-x60", "",
              about="SpacemiT K1/M1 X60 core: RVV 1.0, VLEN 256, integer IME (smt.vmadot)"),
    CpuTarget("spacemit-x60-spine", RISCV, "spacemit-x60", "", SPINE_OPTIONS,
              about="spacemit-x60 with spine-triton's opt flags -force-vector-width=32 -force-vector-interleave=2"),
    # spine-triton 3.6.0+spacemit.a5's own flags for a K1 (backend/compiler.py there, arch id 0x503C):
    # `opt -mcpu=spacemit-x60 -passes=loop-vectorize -force-vector-width=32 -force-vector-interleave=2`
    # then `llc -O3 -mcpu=spacemit-x60 --mattr=64bit,a,b,c,d,f,i,m,v,zfh,zvfh,zicbop,zicbom,zicboz`.
    # For X100/A100 cores it passes -mcpu=spacemit-x100/-a100, which its own LLVM knows and LLVM 22
    # does not (nor zmatrix/xsmtvsfu, its A200 features): see rva23-vlen256.
    CpuTarget("spine-triton", RISCV, "spacemit-x60", SPINE_MATTR, SPINE_OPTIONS,
              about="spine-triton 3.6's opt/llc flags for the K1's X60 (-mcpu=spacemit-x60, its -mattr list)"),
    CpuTarget("rva23-vlen256", RISCV, "generic-rv64", X100_FEATURES,
              about="the nearest LLVM 22 has to SpacemiT's X100 (K3): RVA23's vector and bit-manipulation "
                    "features, VLEN 256, generic scheduling (LLVM 22 has no X100 model)"),
    CpuTarget("rva23-vlen256-spine", RISCV, "generic-rv64", X100_FEATURES, SPINE_OPTIONS,
              about="rva23-vlen256 with spine-triton's forced vector width: its code for an X100/A100, as near "
                    "as LLVM 22 gets"),
    CpuTarget("generic-rv64", RISCV, "generic-rv64", "+m,+a,+f,+d,+c",
              about="RV64GC, no vector extension"),
    CpuTarget("rv64gcv", RISCV, "generic-rv64", "+m,+a,+f,+d,+c,+v",
              about="RV64GC with RVV 1.0 (VLEN 128 minimum)"),
    CpuTarget("sifive-x280", RISCV, "sifive-x280", "",
              about="SiFive X280: RVV 1.0, VLEN 512"),
    CpuTarget("x86-64-v3", X86, "x86-64-v3", "", about="x86-64 with AVX2 and FMA (Haswell and later)"),
    CpuTarget("x86-64-v4", X86, "x86-64-v4", "", about="x86-64 with AVX-512 (Skylake-X and later)"),
    CpuTarget("sapphirerapids", X86, "sapphirerapids", "", about="Intel Sapphire Rapids: AVX-512, AMX tiles"),
    CpuTarget("neoverse-v1", ARM, "neoverse-v1", "", about="Arm Neoverse V1: NEON and SVE (256-bit)"),
    CpuTarget("apple-m1", "arm64-apple-macosx14.0.0", "apple-m1", "", about="Apple M1: NEON"),
)}

# A bare architecture: its baseline CPU.
ARCHES = {"riscv64": (RISCV, "generic-rv64", "+m,+a,+f,+d,+c"), "x86_64": (X86, "x86-64", ""),
          "x86-64": (X86, "x86-64", ""), "aarch64": (ARM, "generic", "+neon"), "arm64": (ARM, "generic", "+neon")}
FEATURE_RE = re.compile(r"^[+-][a-z0-9][a-z0-9._-]*$")


def host() -> CpuTarget:
    llvm = binding()
    return CpuTarget("host", llvm.get_process_triple(), llvm.get_host_cpu_name(), "", about="this machine's CPU")


def names() -> list[str]:
    return list(PRESETS) + ["host"]


def parse(spec: str) -> CpuTarget:
    """`PRESET`, `PRESET:+feat,-feat`, `ARCH` or `ARCH:+feat,...` (ARCH: riscv64, x86_64, aarch64)."""
    head, _, features = spec.partition(":")
    if head == "host":
        base = host()
    elif head in PRESETS:
        base = PRESETS[head]
    elif head in ARCHES:
        triple, cpu, feats = ARCHES[head]
        base = CpuTarget(head, triple, cpu, feats)
    else:
        raise UsageError(f"unknown CPU target '{head}'{did_you_mean(head, [*PRESETS, *ARCHES])}; "
                         f"use a preset ({', '.join(names())}) or ARCH:FEATURES with ARCH one of "
                         f"{', '.join(sorted(set(ARCHES)))} (kinspect targets lists them)")
    if not features:
        return base
    extra = [f.strip() for f in features.split(",") if f.strip()]
    bad = [f for f in extra if not FEATURE_RE.match(f)]
    if bad:
        raise UsageError(f"bad feature '{bad[0]}' in '{spec}': features look like +v,+zvl256b or -avx512f")
    feats = ",".join(x for x in (base.features, *extra) if x)
    return replace(base, name=spec, features=feats)


@dataclass(frozen=True)
class Retargeted:
    target: CpuTarget
    asm: str
    remarks: tuple[str, ...]   # what LLVM printed while compiling (optimization remarks, warnings)
    llvm: str                  # "LLVM 22.1.0 (llvmlite 0.50.0)"


_READY = False


def _init() -> None:
    global _READY
    if not _READY:
        llvm = binding()
        llvm.initialize_all_targets()
        llvm.initialize_all_asmprinters()
        _READY = True


def llvm_version() -> str:
    llvm = binding()
    import llvmlite

    return f"LLVM {'.'.join(map(str, llvm.llvm_version_info))} (llvmlite {llvmlite.__version__})"


# What ties IR to the machine it was made for: replaced by the target's.
_TARGET_LINES = re.compile(r'^\s*target\s+(?:triple|datalayout)\s*=.*$', re.M)
_TARGET_ATTRS = re.compile(r'(?<!\s)\s*"(?:target-cpu|target-features|tune-cpu|target-abi)"="[^"]*"')
# GPU IR: its triple, or (Triton's llir has no triple yet) GPU calling conventions and intrinsics.
GPU_IR = re.compile(r'^\s*target\s+triple\s*=\s*"((?:nvptx|amdgcn|spir)[^"]*)"'
                    r'|\b(ptx_kernel|amdgpu_kernel|spir_kernel)\b|@(llvm\.(?:nvvm|amdgcn)\.)', re.M)


def neutral_ir(text: str) -> str:
    """The IR with its triple, data layout and per-function CPU/feature attributes removed."""
    gpu = GPU_IR.search(text)
    if gpu:
        raise UsageError(f"this LLVM IR is for a GPU ({next(g for g in gpu.groups() if g)}); --retarget compiles "
                         f"a CPU backend's IR (triton-cpu, spine-triton, triton-shared) for another CPU")
    return _TARGET_ATTRS.sub("", _TARGET_LINES.sub("", text))


def compile_ir(text: str, target: CpuTarget, purpose: str = "--retarget") -> Retargeted:
    """Run the O3 pipeline and code generation for `target` on LLVM IR text; the assembly.

    LLVM runs in a child process: a fatal LLVM error (it calls exit()) then costs a clear error
    message instead of the user's process, and llvmlite's process-wide options (such as
    -force-vector-width) cannot leak from one compile into the next."""
    import json
    import subprocess
    import sys

    binding(purpose)   # a missing llvmlite is one line here, not a failed child process
    ir = neutral_ir(text)
    with tempfile.TemporaryDirectory(prefix="kinspect-llvm-") as tmp:
        src, out = os.path.join(tmp, "in.ll"), os.path.join(tmp, "out.s")
        with open(src, "w", encoding="utf-8") as f:
            f.write(ir)
        spec = json.dumps({"triple": target.triple, "cpu": target.cpu, "features": target.features,
                           "options": dict(target.options)})
        try:
            proc = subprocess.run([sys.executable, "-m", "kinspect.backends.retarget", src, out, spec],
                                  capture_output=True, text=True, timeout=600, check=False)
        except subprocess.TimeoutExpired:
            raise CompileError(f"llvmlite took over 10 minutes to compile this LLVM IR for {target.name}") from None
        printed = [line.rstrip() for line in proc.stderr.splitlines() if line.strip()]
        unknown = [line for line in printed if "is not a recognized" in line]
        if unknown:
            raise UsageError(f"{target.name}: LLVM says {unknown[0].strip()}; check the CPU name and features")
        if proc.returncode != 0 or not os.path.isfile(out):
            said = [x for x in printed if x.startswith(("error:", "LLVM ERROR", "<string>"))] or printed[-2:]
            raise CompileError(f"llvmlite ({llvm_version()}) could not compile this LLVM IR for {target.name}: "
                               + ("; ".join(x.removeprefix("error: ") for x in said[:2])
                                  or f"exit code {proc.returncode}"))
        with open(out, encoding="utf-8") as f:
            asm = f.read()
    remarks = tuple(dict.fromkeys(printed))  # LLVM repeats a remark per loop; keep each once
    return Retargeted(target, asm, remarks, llvm_version())


def _compile_here(ir: str, triple: str, cpu: str, features: str, options: dict) -> str:
    llvm = binding()

    _init()
    for name, value in {**OPTION_DEFAULTS, **options}.items():
        llvm.set_option("kinspect", f"-{name}={value}")
    module = llvm.parse_assembly(ir)
    module.triple = triple
    tm = llvm.Target.from_triple(triple).create_target_machine(
        cpu=cpu, features=features, opt=3, reloc="pic", codemodel="default")
    module.data_layout = str(tm.target_data)
    module.verify()
    builder = llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options(speed_level=3))
    builder.getModulePassManager().run(module, builder)
    return tm.emit_assembly(module)


def _child(argv: list[str]) -> int:
    """`python -m kinspect.backends.retarget IN.ll OUT.s SPEC-JSON`: compile_ir's worker."""
    import json
    import sys

    src, out, spec = argv
    t = json.loads(spec)
    with open(src, encoding="utf-8") as f:
        ir = f.read()
    try:
        asm = _compile_here(ir, t["triple"], t["cpu"], t["features"], t["options"])
    except RuntimeError as e:  # llvmlite reports parse and verifier errors so
        lines = [x.strip() for x in str(e).splitlines() if x.strip()]
        print("error: " + ("; ".join(lines[:2]) or e.__class__.__name__), file=sys.stderr)
        return 3
    with open(out, "w", encoding="utf-8") as f:
        f.write(asm)
    return 0


_ATTR = r'"{}"="([^"]*)"'


def own_target(text: str, fallback: str) -> CpuTarget:
    """The CPU the IR itself names (its triple, and target-cpu/target-features attributes where it
    has them), else the `fallback` spec: a backend's own llc flags."""
    from kinspect.isa.detect import isa_of_triple, triple_of

    triple = triple_of(text.splitlines())
    if isa_of_triple(triple) is None:
        return parse(fallback)
    cpu = re.search(_ATTR.format("target-cpu"), text)
    feats = re.search(_ATTR.format("target-features"), text)
    arch = triple.split("-", 1)[0]
    default_cpu = ARCHES.get(arch, (triple, "generic", ""))[1]
    return CpuTarget(f"{arch} (as in the IR)", triple, cpu.group(1) if cpu else default_cpu,
                     feats.group(1) if feats else "")


if __name__ == "__main__":
    import sys

    sys.exit(_child(sys.argv[1:]))
