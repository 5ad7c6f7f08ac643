"""What MLIR ops are, for the dialects Triton's stages print.

TTIR (`tt`, `arith`, `math`, `scf`), TTGIR (`ttg`, `ttng`, `amdg`, upstream `nvgpu`, `amdgpu`,
`gpu`), the CPU backends' MLIR (`linalg`, `memref`, `tensor`, `bufferization`, `vector`,
`affine`, `triton_cpu`, `amx`) and the LLVM dialect (`llvm`). One table, keyed by the full op
name as printed (`tt.dot`, `arith.addf`). Ops it does not list are Kind.OTHER: the parser never
guesses from a dialect prefix.

Check entries against the dialects' .td files (triton/include/triton/Dialect/*/IR/*Ops.td,
mlir/include/mlir/Dialect/*/IR/*Ops.td).
"""

from __future__ import annotations

from kinspect.isa import Isa, register
from kinspect.isa.ops import Access, Kind, OpInfo, OTHER, Space, merge, named


def _merged(*groups: dict) -> dict:
    return merge(*groups, where=__name__)


def _ops(kind: Kind, names: str, **info) -> dict[str, OpInfo]:
    """One OpInfo for every whitespace-separated op name in `names`."""
    return named(OpInfo(kind, **info), names)


OPS: dict[str, OpInfo] = _merged(
    # --- arith: integer and float arithmetic; casts are CONVERT ---
    _ops(Kind.ARITH, """arith.addi arith.subi arith.muli arith.divsi arith.divui arith.ceildivsi
        arith.ceildivui arith.floordivsi arith.remsi arith.remui arith.andi arith.ori arith.xori
        arith.shli arith.shrsi arith.shrui arith.maxsi arith.maxui arith.minsi arith.minui
        arith.cmpi arith.select arith.mulhisi arith.mulhiui arith.addui_extended
        arith.mulsi_extended arith.mului_extended"""),
    _ops(Kind.ARITH, """arith.addf arith.subf arith.mulf arith.divf arith.remf arith.negf
        arith.maxnumf arith.minnumf arith.maximumf arith.minimumf arith.cmpf""", fp=True),
    _ops(Kind.CONVERT, """arith.extsi arith.extui arith.trunci arith.index_cast
        arith.index_castui arith.bitcast"""),
    _ops(Kind.CONVERT, """arith.extf arith.truncf arith.sitofp arith.uitofp arith.fptosi
        arith.fptoui arith.scaling_extf arith.scaling_truncf""", fp=True),
    _ops(Kind.MOVE, "arith.constant"),
    # --- math: transcendental functions run on special units (MUFU, v_exp, libm calls) ---
    _ops(Kind.SPECIAL, """math.exp math.exp2 math.expm1 math.log math.log2 math.log10 math.log1p
        math.sin math.cos math.tan math.tanh math.sinh math.cosh math.asin math.acos math.atan
        math.atan2 math.erf math.erfc math.powf math.fpowi math.sqrt math.rsqrt math.cbrt""", fp=True),
    _ops(Kind.ARITH, """math.absf math.ceil math.floor math.round math.roundeven math.trunc
        math.copysign math.isnan math.isinf math.isfinite""", fp=True),
    _ops(Kind.ARITH, "math.absi math.ctlz math.cttz math.ctpop math.ipowi"),
    _ops(Kind.FMA, "math.fma", fp=True),
    # --- control flow ---
    _ops(Kind.CONTROL, """scf.for scf.while scf.if scf.yield scf.condition scf.parallel
        scf.forall scf.reduce scf.execute_region scf.index_switch cf.br cf.cond_br cf.switch
        cf.assert func.return func.call func.call_indirect affine.for affine.if affine.yield
        affine.parallel tt.return tt.call tt.reduce.return tt.scan.return linalg.yield
        tensor.yield omp.wsloop omp.parallel omp.yield omp.terminator"""),
    # --- tt (TTIR) ---
    _ops(Kind.LOAD, "tt.load", space=Space.GLOBAL),
    _ops(Kind.STORE, "tt.store", space=Space.GLOBAL),
    _ops(Kind.ATOMIC, "tt.atomic_rmw tt.atomic_cas tt.atomic_load tt.atomic_store",
           space=Space.GLOBAL),
    _ops(Kind.LOAD, "tt.descriptor_load tt.descriptor_gather", space=Space.TENSOR),
    _ops(Kind.STORE, "tt.descriptor_store tt.descriptor_scatter tt.descriptor_reduce",
           space=Space.TENSOR),
    _ops(Kind.MATRIX, "tt.dot tt.dot_scaled"),
    _ops(Kind.REDUCE, "tt.reduce tt.scan"),
    _ops(Kind.MOVE, """tt.splat tt.broadcast tt.expand_dims tt.reshape tt.trans tt.cat tt.join
        tt.split tt.make_range tt.get_program_id tt.get_num_programs tt.gather tt.unsplat"""),
    _ops(Kind.ARITH, "tt.addptr tt.advance tt.make_tensor_ptr tt.make_tensor_descriptor tt.mulhiui"),
    _ops(Kind.ARITH, "tt.clampf tt.precise_divf tt.approx_divf", fp=True),
    _ops(Kind.SPECIAL, "tt.precise_sqrt", fp=True),
    _ops(Kind.CONVERT, "tt.bitcast tt.int_to_ptr tt.ptr_to_int"),
    _ops(Kind.CONVERT, "tt.fp_to_fp", fp=True),
    # --- ttg (TTGIR, all GPUs) ---
    _ops(Kind.MOVE, "ttg.convert_layout"),
    _ops(Kind.STORE, "ttg.local_alloc ttg.local_store ttg.local_scatter", space=Space.SHARED),
    _ops(Kind.ATOMIC, "ttg.local_atomic_scatter_rmw", space=Space.SHARED),
    _ops(Kind.LOAD, "ttg.local_load ttg.local_gather", space=Space.SHARED),
    _ops(Kind.LOAD, "ttg.async_copy_global_to_local", space=Space.GLOBAL),
    _ops(Kind.SYNC, "ttg.async_commit_group ttg.async_wait ttg.barrier gpu.barrier"),
    _ops(Kind.ARITH, """ttg.memdesc_index ttg.memdesc_subslice ttg.memdesc_subview
        ttg.memdesc_trans ttg.memdesc_reshape ttg.memdesc_reinterpret"""),
    _ops(Kind.CONVERT, "ttg.upcast_mxfp ttg.fp4_to_fp", fp=True),
    _ops(Kind.CONTROL, "ttg.warp_specialize ttg.warp_yield ttg.warp_return"),
    # --- ttng (NVIDIA Hopper/Blackwell) ---
    _ops(Kind.MATRIX, "ttng.warp_group_dot", unit="hgmma"),
    _ops(Kind.MATRIX, "ttng.tc_gen5_mma ttng.tc_gen5_mma_scaled", unit="tcgen05"),
    _ops(Kind.SYNC, """ttng.warp_group_dot_wait ttng.fence_async_shared ttng.init_barrier
        ttng.inval_barrier ttng.wait_barrier ttng.arrive_barrier ttng.barrier_expect
        ttng.tc_gen5_commit ttng.async_tma_store_wait ttng.cluster_barrier ttng.tmem_wait
        ttng.async_copy_mbarrier_arrive ttng.fence_mbarrier_init_release_cluster
        nvg.wgmma_wait_group"""),
    _ops(Kind.MATRIX, "nvg.wgmma", unit="hgmma"),
    _ops(Kind.LOAD, "ttng.async_tma_copy_global_to_local ttng.async_tma_gather ttng.tmem_load",
           space=Space.TENSOR),
    _ops(Kind.STORE, """ttng.async_tma_copy_local_to_global ttng.async_tma_scatter
        ttng.async_tma_reduce ttng.tmem_store ttng.tmem_copy""", space=Space.TENSOR),
    # --- amdg (Triton's AMD dialect) and upstream amdgpu ---
    _ops(Kind.LOAD, """amdg.buffer_load amdg.buffer_load_to_local amdg.masked_load
        amdgpu.raw_buffer_load amdgpu.gather_to_lds amdgpu.global_load_async_to_lds""",
           space=Space.GLOBAL),
    _ops(Kind.STORE, """amdg.buffer_store amdg.masked_store amdg.async_copy_local_to_global
        amdgpu.raw_buffer_store""", space=Space.GLOBAL),
    _ops(Kind.LOAD, "amdg.async_tdm_copy_global_to_local amdg.async_tdm_gather",
           space=Space.TENSOR),
    _ops(Kind.STORE, "amdg.async_tdm_copy_local_to_global amdg.async_tdm_scatter",
           space=Space.TENSOR),
    _ops(Kind.SYNC, """amdg.async_wait amdg.async_tdm_wait amdg.init_barrier amdg.wait_barrier
        amdg.arrive_barrier amdg.cond_barrier amdg.cluster_barrier_arrive
        amdg.cluster_barrier_wait"""),
    _ops(Kind.ATOMIC, "amdg.buffer_atomic_rmw amdg.buffer_atomic_cas", space=Space.GLOBAL),
    _ops(Kind.LOAD, "amdg.local_load_packed_transposed", space=Space.SHARED),
    _ops(Kind.MOVE, "amdg.in_thread_transpose amdg.extract_slice amdg.concat"),
    _ops(Kind.MATRIX, "amdgpu.mfma amdgpu.scaled_mfma amdgpu.sparse_mfma", unit="mfma"),
    _ops(Kind.MATRIX, "amdgpu.wmma amdgpu.scaled_wmma amdgpu.sparse_wmma", unit="wmma"),
    _ops(Kind.SYNC, "amdgpu.lds_barrier amdgpu.memory_counter_wait"),
    # --- nvgpu (upstream) ---
    _ops(Kind.MATRIX, "nvgpu.mma.sync nvgpu.mma.sp.sync", unit="hmma"),
    _ops(Kind.MATRIX, "nvgpu.warpgroup.mma", unit="hgmma"),
    _ops(Kind.LOAD, "nvgpu.ldmatrix", space=Space.SHARED),
    _ops(Kind.LOAD, "nvgpu.device_async_copy", space=Space.GLOBAL),
    _ops(Kind.SYNC, "nvgpu.device_async_create_group nvgpu.device_async_wait"),
    # --- CPU backends: linalg / memref / tensor / bufferization / vector / affine ---
    _ops(Kind.MATRIX, """linalg.matmul linalg.batch_matmul linalg.matmul_transpose_a
        linalg.matmul_transpose_b linalg.batch_reduce_matmul linalg.contract"""),
    _ops(Kind.REDUCE, "linalg.reduce"),
    _ops(Kind.MOVE, "linalg.fill linalg.broadcast linalg.transpose linalg.copy"),
    _ops(Kind.LOAD, "memref.load affine.load"),
    _ops(Kind.STORE, "memref.store affine.store"),
    _ops(Kind.MOVE, "memref.copy"),                  # memory to memory, either direction
    _ops(Kind.STORE, "bufferization.materialize_in_destination"),   # triton-shared's tt.store
    _ops(Kind.MOVE, """tensor.extract tensor.insert tensor.extract_slice tensor.insert_slice
        tensor.expand_shape tensor.collapse_shape tensor.splat tensor.pad"""),
    _ops(Kind.LOAD, "vector.load vector.maskedload vector.transfer_read", vector=True,
           access=Access.UNIT),
    _ops(Kind.STORE, "vector.store vector.maskedstore vector.transfer_write", vector=True,
           access=Access.UNIT),
    _ops(Kind.LOAD, "vector.gather", vector=True, access=Access.INDEXED),
    _ops(Kind.STORE, "vector.scatter", vector=True, access=Access.INDEXED),
    _ops(Kind.REDUCE, "vector.reduction vector.multi_reduction", vector=True),
    _ops(Kind.FMA, "vector.fma", vector=True, fp=True),
    _ops(Kind.MATRIX, "vector.contract vector.outerproduct", vector=True),
    _ops(Kind.MOVE, """vector.broadcast vector.splat vector.shuffle vector.extract
        vector.insert vector.extract_strided_slice vector.insert_strided_slice vector.transpose
        vector.shape_cast vector.extractelement vector.insertelement vector.from_elements
        vector.interleave vector.deinterleave""", vector=True),
    _ops(Kind.CONVERT, "vector.bitcast", vector=True),
    # --- spine-triton (SpacemiT) 3.6.0+spacemit.a5: the ops its TTIR and Linalg stages print, from
    # include/triton-shared/Dialect/{XSMT,XSMTAsync,TLE}/IR/*Ops.td and triton_shared.cc there.
    # Python's smt.dot builds xsmt.mmt4d (packed 4-D tiles), lowered to linalg.mmt4d; smt.view builds
    # xsmt.pack/unpack/repack/subview (-> linalg.pack/unpack); smt.descriptor_load is tt.advance +
    # tt.load, smt.parallel an scf.for marked `bind_sub_block`, so neither has an op of its own.
    # A plain tt.dot becomes linalg.matmul. ---
    _ops(Kind.MATRIX, "xsmt.mmt4d linalg.mmt4d linalg.batch_mmt4d", unit="mmt4d"),
    _ops(Kind.MOVE, """xsmt.pack xsmt.unpack xsmt.repack xsmt.subview xsmt.subview_pack
        xsmt.descriptor_load_view xsmt.buffer_tensor_view xsmt.alloc xsmt.alloc_copies xsmt.annotation
        linalg.pack linalg.unpack tensor.pack tensor.unpack tle.extract_tile tle.insert_tile
        memref.subview memref.reinterpret_cast memref.alloc memref.alloca memref.cast
        memref.expand_shape memref.collapse_shape tensor.empty bufferization.alloc_tensor
        bufferization.to_tensor bufferization.to_memref bufferization.to_buffer"""),
    _ops(Kind.SYNC, """xsmt.mbarrier_create xsmt.mbarrier_copies xsmt.mbarrier_subview
        xsmt.global_mbarrier_init xsmt.barrier_arrive xsmt.barrier_wait xsmt.barrier_set_expect
        xsmt_async.mbarrier_alloc xsmt_async.mbarrier_release xsmt_async.mbarrier_arrive
        xsmt_async.mbarrier_wait"""),
    _ops(Kind.MOVE, "xsmt.get_num_of_thread"),
    # later than the 3.6.0+spacemit.a5 sources (spine-triton-tutorial): xsmt_async.grid, an i64
    # program id; tle.dsl_region, a spine_raw kernel's body inlined into the host kernel (lowered
    # to spine_ext.raw_region, then RVV)
    _ops(Kind.MOVE, "xsmt_async.grid"),
    _ops(Kind.CONTROL, "tle.dsl_region spine_ext.raw_region"),
    # triton-shared's intermediate dialects (tts: structured pointers, ttx: tiling ops), seen in
    # pass-by-pass dumps between TTIR and Linalg
    _ops(Kind.LOAD, "tts.load", space=Space.GLOBAL),
    _ops(Kind.STORE, "tts.store", space=Space.GLOBAL),
    _ops(Kind.LOAD, "tts.gather", space=Space.GLOBAL, access=Access.INDEXED),
    _ops(Kind.STORE, "tts.scatter", space=Space.GLOBAL, access=Access.INDEXED),
    _ops(Kind.MOVE, "tts.make_tptr tts.make_gather_scatter_tptr tts.get_structured_state"),
    _ops(Kind.REDUCE, "ttx.cumsum"),
    # --- triton-cpu (dialect `triton_cpu`) and AMX ---
    _ops(Kind.LOAD, "triton_cpu.load"),
    _ops(Kind.STORE, "triton_cpu.store"),
    _ops(Kind.MATRIX, "triton_cpu.dot triton_cpu.brgemm_execute"),
    _ops(Kind.MATRIX, "amx.tile_mulf amx.tile_muli", unit="amx"),
    _ops(Kind.LOAD, "amx.tile_load", unit="amx"),
    _ops(Kind.STORE, "amx.tile_store", unit="amx"),
    # --- LLVM dialect ---
    _ops(Kind.ARITH, """llvm.add llvm.sub llvm.mul llvm.udiv llvm.sdiv llvm.urem llvm.srem
        llvm.shl llvm.lshr llvm.ashr llvm.and llvm.or llvm.xor llvm.icmp llvm.select
        llvm.getelementptr llvm.intr.smin llvm.intr.smax llvm.intr.umin llvm.intr.umax
        llvm.intr.abs llvm.intr.ctpop llvm.intr.ctlz llvm.intr.cttz"""),
    _ops(Kind.ARITH, """llvm.fadd llvm.fsub llvm.fmul llvm.fdiv llvm.frem llvm.fneg llvm.fcmp
        llvm.intr.maxnum llvm.intr.minnum llvm.intr.maximum llvm.intr.minimum llvm.intr.fabs
        llvm.intr.floor llvm.intr.ceil llvm.intr.trunc llvm.intr.copysign""", fp=True),
    _ops(Kind.SPECIAL, """llvm.intr.exp llvm.intr.exp2 llvm.intr.log llvm.intr.log2
        llvm.intr.log10 llvm.intr.sin llvm.intr.cos llvm.intr.pow llvm.intr.sqrt""", fp=True),
    _ops(Kind.FMA, "llvm.intr.fma llvm.intr.fmuladd", fp=True),
    _ops(Kind.CONVERT, """llvm.sext llvm.zext llvm.trunc llvm.ptrtoint llvm.inttoptr
        llvm.bitcast llvm.addrspacecast"""),
    _ops(Kind.CONVERT, "llvm.fpext llvm.fptrunc llvm.sitofp llvm.uitofp llvm.fptosi llvm.fptoui",
           fp=True),
    _ops(Kind.MOVE, """llvm.mlir.constant llvm.mlir.poison llvm.mlir.undef llvm.mlir.zero
        llvm.insertvalue llvm.extractvalue llvm.insertelement llvm.extractelement
        llvm.shufflevector"""),
    _ops(Kind.LOAD, "llvm.load"),
    _ops(Kind.STORE, "llvm.store"),
    _ops(Kind.ATOMIC, "llvm.atomicrmw llvm.cmpxchg"),
    _ops(Kind.SYNC, "llvm.fence"),
    _ops(Kind.LOAD, "llvm.intr.masked.load", vector=True, access=Access.UNIT),
    _ops(Kind.STORE, "llvm.intr.masked.store", vector=True, access=Access.UNIT),
    _ops(Kind.LOAD, "llvm.intr.masked.gather", vector=True, access=Access.INDEXED),
    _ops(Kind.STORE, "llvm.intr.masked.scatter", vector=True, access=Access.INDEXED),
    # fadd/fmul reductions are sequential unless the op carries the `reassoc` fast-math flag;
    # the parser clears `ordered` when it sees the flag.
    _ops(Kind.REDUCE, "llvm.intr.vector.reduce.fadd llvm.intr.vector.reduce.fmul",
           vector=True, fp=True, ordered=True),
    _ops(Kind.REDUCE, """llvm.intr.vector.reduce.fmax llvm.intr.vector.reduce.fmin
        llvm.intr.vector.reduce.fmaximum llvm.intr.vector.reduce.fminimum""",
           vector=True, fp=True, ordered=False),
    _ops(Kind.REDUCE, """llvm.intr.vector.reduce.add llvm.intr.vector.reduce.mul
        llvm.intr.vector.reduce.and llvm.intr.vector.reduce.or llvm.intr.vector.reduce.xor
        llvm.intr.vector.reduce.smax llvm.intr.vector.reduce.smin llvm.intr.vector.reduce.umax
        llvm.intr.vector.reduce.umin""", vector=True, ordered=False),
    _ops(Kind.CONTROL, "llvm.br llvm.cond_br llvm.switch llvm.return llvm.call llvm.unreachable"),
)

# Ops whose meaning changes when they have no operands: `ttg.local_alloc : () -> !ttg.memdesc`
# only reserves shared memory, while `ttg.local_alloc %t : (tensor) -> ...` also stores %t.
NO_OPERAND: dict[str, OpInfo] = {
    "ttg.local_alloc": OpInfo(Kind.OTHER, space=Space.SHARED),
}


def lookup(name: str, *, has_operands: bool = True) -> OpInfo:
    """The OpInfo for an op name as printed (`tt.dot`), Kind.OTHER when the table lacks it."""
    if not has_operands and name in NO_OPERAND:
        return NO_OPERAND[name]
    return OPS.get(name, OTHER)


register(Isa(name="mlir", title="MLIR", parser="kinspect.ir.mlir", lexer="kinspect.render.lexers:MlirLexer",
             extensions=(".ttir", ".ttgir", ".mlir", ".ttcir", ".tttcir"), diff_rank=80))
