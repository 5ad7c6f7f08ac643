"""The compiler half: Triton's real TTIR passes with the module attributes spine-triton 3.6.0+spacemit.a5
sets (tt.num_threads, tt.arch_id, tt.force_vector_interleave, from its target), then spine-triton's later
stages (linalgdir, llir, so) from the real RISC-V pipeline output the test put in KINSPECT_TEST_SPINE_STAGES."""

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from triton._C.libtriton import ir, passes
from triton.backends.compiler import BaseBackend, GPUTarget

# Where the test put the fixture stages (linalgdir, llir, so) for this backend to hand out.
STAGES = Path(os.environ.get("KINSPECT_TEST_SPINE_STAGES", Path(__file__).parent / "stages"))


@dataclass(frozen=True)
class SpineTestOptions:
    debug: bool = False
    arch: str = "riscv64"
    num_warps: int = 0
    warp_size: int = 0          # Triton 3.9's loader reads it
    num_ctas: int = 0
    num_stages: int = 1
    enable_fp_fusion: bool = False
    extern_libs = None
    cluster_dims: tuple = (1, 1, 1)
    shared: bool = False
    supported_fp8_dtypes: tuple = ()
    allow_fp8e4nv: bool = False
    allowed_dot_input_precisions: tuple = ("ieee",)
    sanitize_overflow: bool = True
    # what Triton's JIT passes every backend (3.9: instrumentation and fp-sanitizer knobs)
    instrumentation_mode: str = ""
    fpsan_homomorphic_casts: bool = False

    def hash(self):
        key = "_".join(f"{k}-{v}" for k, v in self.__dict__.items())
        return hashlib.md5(key.encode()).hexdigest()


class SpineTestBackend(BaseBackend):
    binary_ext = "so"

    @staticmethod
    def supports_target(target: GPUTarget):
        return target.backend == "cpu"

    def __init__(self, target: GPUTarget) -> None:
        super().__init__(target)

    def hash(self) -> str:
        return f"kinspect-spine-test-{self.target.arch}"

    def parse_options(self, opts):
        fields = SpineTestOptions.__dataclass_fields__
        return SpineTestOptions(**{"arch": self.target.arch, **{k: opts[k] for k in fields if k in opts}})

    def pack_metadata(self, metadata):
        return (metadata.num_warps, metadata.num_ctas, metadata.shared, *metadata.cluster_dims, metadata.name)

    def get_codegen_implementation(self, options):
        return {"min_dot_size": lambda lhs, rhs: (1, 1, 1)}

    def get_module_map(self):
        return {}

    def load_dialects(self, ctx):
        pass

    @staticmethod
    def make_ttir(mod, metadata, opt):
        pm = ir.pass_manager(mod.context)
        passes.common.add_inliner(pm)
        passes.ttir.add_combine(pm)
        passes.common.add_canonicalizer(pm)
        passes.common.add_cse(pm)
        passes.common.add_symbol_dce(pm)
        pm.run(mod, "make_ttir")
        target = metadata["target"]
        builder = ir.builder(mod.context)
        mod.set_attr("tt.num_threads", builder.get_int32_attr(getattr(target, "num_threads", 1)))
        mod.set_attr("tt.arch_id", builder.get_string_attr(getattr(target, "arch_id", "")))
        interleave = getattr(target, "force_vector_interleave", 2)
        mod.set_attr("tt.force_vector_interleave", builder.get_int32_attr(interleave))
        metadata["name"] = re.search(r"tt\.func\s+public\s+@(\w+)", str(mod))[1]
        return mod

    @staticmethod
    def make_linalgdir(src, metadata):
        # spine-triton records whether the kernel runs smt.parallel itself (its launcher then does not
        # spread programs over threads); the fixture kernel does not.
        metadata["smt_parallel_inside"] = "bind_sub_block = true" in str(src)
        return (STAGES / "linalgdir.mlir").read_text()

    def add_stages(self, stages, options, language):
        stages["ttir"] = lambda src, metadata: self.make_ttir(src, metadata, options)
        stages["linalgdir"] = lambda src, metadata: self.make_linalgdir(src, metadata)
        stages["llir"] = lambda src, metadata: (STAGES / "ll.ir").read_text()
        stages["so"] = lambda src, metadata: (STAGES / "kernel.o").read_bytes()
