"""A CPU Triton backend, live: `kinspect capture` and `kinspect bench` end to end against a backend
plugin Triton discovers as it discovers spine-triton (tests/spine_plugin: an entry point in the
`triton.backends` group), producing spine-triton's stages (ttir, linalgdir, llir, so) from the real
RISC-V pipeline output in tests/fixtures/cpu. Each command runs in a child process: Triton finds its
backends when it is imported."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kinspect.files.store import read_records
from tests.helpers import kinspect_process as kinspect, make_spine

@pytest.fixture(scope="module")
def spine(tmp_path_factory):
    """(environment with the plugin discoverable and active, the kernel script)."""
    return make_spine(tmp_path_factory)


def test_triton_finds_the_plugin_and_a_program_activates_it(spine):
    """As spine-triton 3.6: Triton lists the backend, its driver is not active until the program sets it."""
    env, _ = spine
    code = ("import triton; from triton.backends import backends; from triton.runtime import driver\n"
            "d = backends['spine_triton'].driver\n"
            "print(sorted(backends), d.is_active())\n"
            "driver.set_active(d()); print(driver.active.get_current_target())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    assert "'spine_triton'" in out and "] False" in out, out
    assert "SpineTarget(backend='cpu', arch='spacemit-x60', warp_size=0" in out and "arch_id='0x503C'" in out, out


def test_capture_of_a_program_on_the_cpu_backend(spine, tmp_path):
    env, script = spine
    r = kinspect(env, "capture", "--store", tmp_path / "out", "--", sys.executable, script)
    assert r.returncode == 0, r.stderr
    assert "softmax on the spine test backend: ok" in r.stdout
    assert "kinspect: 1 variant(s) recorded" in r.stderr and "3 launch(es) in 1 process(es)" in r.stderr
    [v] = read_records(tmp_path / "out")
    assert str(v.target) == "cpu:spacemit-x60" and v.backend == "spine-triton"
    assert [s.name for s in v.stages] == ["source", "ttir", "linalgdir", "llir", "asm", "so", "json"]
    assert v.stage("asm").dialect == "riscv" and v.stage("asm").derived_by, "derived after the program ended"
    assert v.launches.calls == 3 and v.launches.top().grid == (64, 1, 1)
    assert v.times is not None and dict(v.times.stages).keys() >= {"ttir", "linalgdir", "llir", "so"}
    rep = kinspect(env, "vec-report", tmp_path / "out")
    assert rep.returncode == 0, rep.stderr
    # what the board's question asks, answered from the captured .so (the X60 code spine-triton's llc makes)
    assert "RVV used" in rep.stdout and "vector loads: 244 unit-stride" in rep.stdout, rep.stdout
    assert "1 ordered reductions (vfredosum.vs)" in rep.stdout and "scalar libm calls: expf 64" in rep.stdout
    assert "no Python lines: this spine-triton code carries no debug info" in rep.stdout


@pytest.mark.skipif(__import__("torch").cuda.is_available(),
                    reason="with a GPU active, kinspect benches on the GPU (tests/gpu/test_spine_beside_gpu.py); "
                           "spine-triton's own triton has no GPU backend")
def test_bench_on_the_cpu_backend(spine, tmp_path):
    env, script = spine
    r = kinspect(env, "bench", f"{script}:softmax_kernel", "--store", tmp_path / "out", "--rep", "50", "--warmup", "5",
                 "--no-compile")
    assert r.returncode == 0, r.stderr + r.stdout
    out = r.stdout
    assert "target   cpu:spacemit-x60 (the active device)" in out
    cold = next(line for line in out.splitlines() if "cold (cache miss)" in line)
    assert "compiled:" in cold and "linalgdir" in cold and "llir" in cold and " so " in cold
    assert "steady state  median" in out and "threads busy on average" in out
    threads = max(1, min(4, os.cpu_count() or 1))         # the stand-in target's num_threads
    assert f"threads available: {threads} (the backend's target: its runtime's stream threads)" in out, out
    assert "correct: max error" in out


@pytest.mark.parametrize("arch_id, core, flags", [
    ("0x503C", "spacemit-x60", "riscv64 -mcpu=spacemit-x60 -mattr=+64bit,"),
    ("0xA064", "spacemit-a100", "riscv64 -mcpu=spacemit-x60 -mattr=+64bit,"),        # + VLEN 1024
    ("0x5064", "spacemit-x100", "-mcpu=generic-rv64 -mattr=+m,+a,+f,+d,+c,+v,+zvl256b,"),
])
def test_a_caches_assembly_is_regenerated_for_the_core_its_target_names(spine, tmp_path, arch_id, core, flags):
    """Without objdump, a spine-triton variant's assembly is its llir compiled again for the core its
    Triton metadata names: the X60 with spine-triton's own flags; a K3's A100 or X100 (no LLVM 22
    model) as near as LLVM 22 gets (the X60 model with VLEN 1024; RVA23 on a generic core), said so."""
    env, script = spine
    env = {**env, "SPACEMIT_EP_QEMU_SET_CORE_ARCH": arch_id, "TRITON_CACHE_DIR": str(tmp_path / "cache")}
    subprocess.run([sys.executable, script], env=env, check=True, capture_output=True, timeout=600)
    no_objdump = {**env, "PATH": str(Path(sys.executable).parent)}
    r = kinspect(no_objdump, "vec-report", tmp_path / "cache", "--json")
    assert r.returncode == 0, r.stderr
    import json

    [rep] = json.loads(r.stdout)
    assert rep["target"] == f"cpu:{core}" and rep["isa"] == "riscv"
    how = rep["isa_stage"]["derived_by"]
    assert flags in how and "-force-vector-width=32" in how, how
    assert ("the nearest LLVM" in how) == (core != "spacemit-x60"), how
    assert ("+zvl1024b" in how) == (core == "spacemit-a100"), how


def test_the_regenerated_assembly_follows_the_core_when_the_metadata_changes(spine, tmp_path):
    """kinspect keeps derived assembly in its cache; the key holds the metadata that names the core,
    so a cache whose <k>.json now names another core is not answered with the old core's code."""
    import json

    env, script = spine
    env = {**env, "SPACEMIT_EP_QEMU_SET_CORE_ARCH": "0x503C", "TRITON_CACHE_DIR": str(tmp_path / "cache")}
    subprocess.run([sys.executable, script], env=env, check=True, capture_output=True, timeout=600)
    no_objdump = {**env, "PATH": str(Path(sys.executable).parent)}
    derived = []
    for core in ("spacemit-x60", "spacemit-a100"):
        for meta in (tmp_path / "cache").rglob("*.json"):
            d = json.loads(meta.read_text())
            if isinstance(d, dict) and isinstance(d.get("target"), dict):
                d["target"]["arch"] = core
                meta.write_text(json.dumps(d))
        r = kinspect(no_objdump, "vec-report", tmp_path / "cache", "--json")
        assert r.returncode == 0, r.stderr
        [rep] = json.loads(r.stdout)
        derived.append(rep["isa_stage"]["derived_by"])
    assert "+zvl1024b" not in derived[0] and "+zvl1024b" in derived[1], derived
