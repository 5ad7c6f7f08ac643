"""Where each Inductor kernel came from: its ATen ops and the model line that made it, read from real
Inductor output code (made here on the CPU through torch.compile's Triton backend, and the wrappers
of the GPT-2 capture on an H200), kept per variant and validated when read."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kinspect.files import provenance
from kinspect.analysis.explain import provenance_status
from kinspect.hooks.inductor_origins import InductorOrigins
from kinspect.files.provenance import Origin, parse_frames, parse_output_code
from kinspect.files.store import read_records
from tests.helpers import ROOT

MODEL = ROOT / "tests" / "data" / "inductor_origins.py"


def line_of(text: str) -> int:
    return next(i for i, s in enumerate(MODEL.read_text().splitlines(), 1) if s.strip() == text)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory) -> dict:
    """{kernel file: origin} as a capture's process reads it after torch.compile of a small block."""
    tmp = tmp_path_factory.mktemp("inductor")
    out = tmp / "origins.json"
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(tmp / "cache"), "PYTHONPATH": str(ROOT),
           "TRITON_DEFAULT_FP_FUSION": "1"}
    proc = subprocess.run([sys.executable, str(MODEL), str(out)], env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {path: Origin.from_json(d) for path, d in json.loads(out.read_text()).items()}


def test_each_kernel_gets_its_aten_ops_and_the_model_line_of_its_call(compiled):
    by_kernel = {o.kernel: o for o in compiled.values() if o.graph == "0_forward"}
    assert set(by_kernel) == {"triton_per_fused_native_layer_norm_0", "triton_poi_fused_add_gelu_mul_view_1"}
    ln = by_kernel["triton_per_fused_native_layer_norm_0"]
    assert ln.aten == ("aten.native_layer_norm",) and ln.nodes == ("h",) and ln.graph == "0_forward"
    [line] = ln.lines
    assert (Path(line.file).name, line.line, line.function, line.code) == \
        ("inductor_origins.py", line_of("h = self.ln(x)"), "forward", "h = self.ln(x)")
    gelu = by_kernel["triton_poi_fused_add_gelu_mul_view_1"]
    assert "aten.gelu" in gelu.aten and dict(gelu.mapping)["h_1"].startswith("add")
    assert gelu.lines[0].code == "return x + h * 0.5", "the last op fused into the kernel"
    assert gelu.short() == f"inductor_origins.py:{line_of('return x + h * 0.5')} forward"
    assert all(Path(p).parent.parent.name == "cache" for p in compiled), "kernel files in Inductor's cache"


def test_a_torch_nn_module_compiled_directly_gets_its_aten_ops_and_says_why_no_line(compiled, gpt2, tmp_path):
    """Dynamo leaves frames inside torch/nn/modules out of the stack traces Inductor keeps: torch.compile of a
    torch.nn module itself names no model line (on the H200, torch.compile(nn.TransformerEncoderLayer) gave none
    for any of its kernels). The status says why and what gives the lines."""
    import dataclasses

    [softmax] = [o for o in compiled.values() if o.graph != "0_forward"]
    assert "aten._softmax" in softmax.aten and softmax.call_sites and softmax.lines == []
    v = next(iter(read_records(gpt2 / "gpt2")))
    folder = tmp_path / "v"
    folder.mkdir()
    provenance.write(folder, softmax)
    got = provenance_status(dataclasses.replace(v, path=str(folder)))
    assert "torch/nn/modules" in got.why and "of your own" in got.fix
    assert got.short.startswith("_softmax")


def test_a_captured_variant_gets_its_origin_written_beside_it(compiled, tmp_path):
    path = next(iter(compiled))
    folder = tmp_path / "variant"
    folder.mkdir()
    (folder / "record.json").write_text(json.dumps({"source": {"file": path, "line": 10}}))
    origins = InductorOrigins()
    origins.by_path = dict(compiled)
    origins.attach({"abc": folder})
    assert provenance.read(folder) == compiled[path]


def test_the_gpt2_wrappers_name_every_captured_kernel(gpt2):
    found = {}
    for p in (gpt2 / "output_code").rglob("*.py"):
        found.update({o.kernel_path.replace("/tmp/ind", str(gpt2 / "output_code")): o
                      for o in parse_output_code(p.read_text())})
    variants = list(read_records(gpt2 / "gpt2"))
    kernels = {v.source.file.replace("/tmp/ind", str(gpt2 / "output_code")) for v in variants}
    assert kernels <= set(found), sorted(kernels - set(found))[:3]
    cat = next(o for o in found.values() if o.kernel.endswith("cat_clone_transpose_view_12"))
    assert cat.graph == "0_backward" and "aten.cat" in cat.aten and len(cat.call_sites) == 4   # one per layer
    assert cat.lines == [] and cat.short() == "add, transpose, view …", "no line map in a file: ATen ops"


def test_stack_traces_and_records_are_data():
    trace = ('  File "/work/m.py", line 13, in forward\n    h = gelu(self.fc(h))\n        ^^^^^\n'
             '  File "/usr/lib/python3/site-packages/torch/nn/modules/linear.py", line 125, in forward\n'
             '    return F.linear(input, self.weight, self.bias)\n')
    frames = parse_frames(trace)
    assert [(f.file, f.line) for f in frames] == [("/work/m.py", 13),
                                                   ("/usr/lib/python3/site-packages/torch/nn/modules/linear.py", 125)]
    site = provenance.InductorCall(frames)
    assert site.line.file == "/work/m.py", "the model's line, not torch's"
    good = Origin("k", "/x/k.py", call_sites=(site,)).to_json()
    assert Origin.from_json(good).call_sites[0].frames == frames
    for bad in ({**good, "version": 2}, {**good, "aten": "aten.add"},
                {**good, "call_sites": [{"frames": [{"file": "a", "line": "1", "function": "f", "code": ""}]}]},
                {**good, "mapping": [["a"]]}, []):
        with pytest.raises((ValueError, KeyError, TypeError)):
            Origin.from_json(bad)


def test_status_says_what_is_missing_and_how_to_get_it(gpt2, tmp_path):
    import dataclasses

    v = next(iter(read_records(gpt2 / "gpt2")))
    missing = provenance_status(v)
    assert missing.status == "not recorded" and "kinspect capture" in missing.fix
    folder = tmp_path / "v"
    folder.mkdir()
    provenance.write(folder, Origin(v.kernel, v.source.file, aten=("aten.add",)))
    got = provenance_status(dataclasses.replace(v, path=str(folder)))
    assert got.status == "recorded" and got.short == "add" and "no model line" in got.why
    hand = dataclasses.replace(v, source=dataclasses.replace(v.source, text="@triton.jit\ndef k(x):\n    pass\n"))
    assert provenance_status(hand).status == "own source"


def test_every_capture_path_writes_origins_when_its_launches_are_flushed(gpt2, tmp_path, monkeypatch):
    """kinspect.capture() and `kinspect capture`'s processes both record launches with a LaunchRecorder: its
    flush reads the output code Inductor loaded (a stand-in PyCodeCache holding the GPT-2 run's wrappers)."""
    import shutil
    import types

    from kinspect.hooks.launch_counts import LaunchRecorder
    from kinspect.files.store import Store

    store, code = tmp_path / "store", tmp_path / "output_code"
    shutil.copytree(gpt2 / "gpt2", store)
    shutil.copytree(gpt2 / "output_code", code)
    wrappers = {str(p): [] for p in code.rglob("*.py")}
    v = next(v for v in read_records(store) if v.kernel.endswith("cat_clone_transpose_view_12"))
    record = json.loads(Path(v.path, "record.json").read_text())
    local = v.source.file.replace("/tmp/ind", str(code))
    for path in wrappers:      # the copies live below tmp_path, not at /tmp/ind
        Path(path).write_text(Path(path).read_text().replace("/tmp/ind", str(code)))
    record["source"]["file"] = local
    Path(v.path, "record.json").write_text(json.dumps(record))
    codecache = types.ModuleType("torch._inductor.codecache")
    codecache.PyCodeCache = types.SimpleNamespace(linemaps=wrappers, modules=[])
    monkeypatch.setitem(sys.modules, "torch._inductor.codecache", codecache)
    rec = LaunchRecorder(Store(store))
    rec.folders[v.hash] = Path(v.path)
    rec.flush(final=True)
    origin = provenance.read(v.path)
    assert origin is not None and origin.kernel == v.kernel and "aten.cat" in origin.aten
