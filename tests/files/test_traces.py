"""Traces and Triton's own files as input, against kinspect's own compile of the same kernel.

One compile of the flash-attention corpus kernel for cuda:90 (tests/trace_maker.py, its own
process) writes a tritonparse trace (plain, gzip and zstd; and tritonparse's parsed output), a
TRITON_KERNEL_DUMP folder and a Triton cache entry; `kinspect dump` compiles the same kernel. Read
from each, kinspect gives the same instruction counts, registers (where the input has a cubin) and
findings.
"""

import gzip
import zlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.corpus.manifest import HERE as CORPUS
from tests.helpers import ROOT, run_raising as run

pytest.importorskip("tritonparse")

KERNEL = f"{CORPUS / 'flash_attention.py'}:attn_fwd"
DOT_LINES = {28, 36}    # qk = tl.dot(q, k) and acc = tl.dot(p.to(tl.float16), v, acc)
# 02:-:1:Y:4 before an instruction, as Triton's dump and `kinspect show` print it
CONTROL = re.compile(r"^((?:--|\d\d):[-0-7]:[-0-7]:[-Y]:[0-9a-f]+)\s")


def make(out: Path, kernel: str = KERNEL, *compressions: str) -> Path:
    subprocess.run([sys.executable, str(ROOT / "tests" / "trace_maker.py"), str(out), kernel, "cuda:90",
                    *(compressions or ("none", "gzip", "zstd"))], check=True, capture_output=True, timeout=600,
                   env=dict(os.environ))
    return out


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    out = make(tmp_path_factory.mktemp("foreign"))
    r = run("dump", KERNEL, "-t", "cuda:90", "--store", out / "store")
    assert r.exit_code == 0, r.output
    return out


def sources(made: Path) -> dict[str, Path]:
    [dump] = (made / "dump").iterdir()
    [cache] = (made / "cache").iterdir()
    [store] = (made / "store" / "attn_fwd").iterdir()
    return {"kinspect dump": store, "TRITON_KERNEL_DUMP": dump, "Triton cache": cache,
            "tritonparse": made / "trace-none", "tritonparse gzip": made / "trace-gzip",
            "tritonparse zstd": made / "trace-zstd", "tritonparse parsed": made / "parsed"}


def report(path: Path) -> dict:
    r = run("vec-report", path, "--json")
    assert r.exit_code == 0, r.output
    [one] = json.loads(r.stdout)
    return one


def test_every_source_gives_the_same_figures(made):
    reports = {name: report(p) for name, p in sources(made).items()}
    ours = reports["kinspect dump"]
    assert ours["instructions"] > 500 and ours["matrix_by_unit"] == {"hgmma": 8}
    for name, r in reports.items():
        assert (r["instructions"], r["mnemonics"], r["matrix_by_unit"], r["load_widths"], r["store_widths"]) == \
            (ours["instructions"], ours["mnemonics"], ours["matrix_by_unit"], ours["load_widths"],
             ours["store_widths"]), name
        assert findings(r) == findings(ours), name
        # a trace holds no cubin: ptxas makes it from the trace's PTX as Triton does, so the same registers
        assert r["registers"] == ours["registers"], name
        assert ("of a cubin derived: ptxas" in r["registers_from"]) == name.startswith("tritonparse"), name
    assert {line for r in reports.values() for v in r["verdicts"] if "HGMMA" in v["text"] for line in [v["line"]]} \
        == DOT_LINES


def findings(r: dict) -> list:
    """The verdicts that read the code: level, kind, kernel line (registers and occupancy need a cubin
    and Triton's metadata, which not every input has)."""
    return sorted((v["level"], v["line"] or 0, WHERE.sub("", v["text"]))
                  for v in r["verdicts"] if "registers" not in v["text"] and "occupancy" not in v["text"])


# `line 21 q = tl.load(...` where the input has the kernel's source, `flash_attention.py:21` where not
WHERE = re.compile(r"^(?:line \d+ .*?|\S+\.py:\d+)(?= → | loads| async copies)")


def test_a_trace_variant_carries_what_the_trace_holds(made):
    from kinspect.files import sources as src

    listing = src.discover(made / "trace-none")
    [v] = listing.variants
    assert listing.kind == "trace" and not listing.warnings
    assert v.origin == "trace" and v.kernel == "attn_fwd" and str(v.target) == "cuda:90"
    assert v.constexprs == {"BLOCK_M": 128, "BLOCK_N": 64, "HEAD_DIM": 64}
    assert v.attributes["Q"] == {"tt.divisibility": 16}
    assert v.options["num_warps"] == 8 and v.options["shared"] > 0 and v.triton_version
    assert [s.name for s in v.stages if s.dialect != "json"] == ["ttir", "ttgir", "llir", "ptx", "sass"]
    assert v.times.stages and [n for n, _ in v.times.stages][:2] == ["ttir", "ttgir"]
    assert v.source.line == 5 and v.source.text.startswith("@triton.jit\ndef attn_fwd(")
    assert v.launches.calls == 1 and v.launches.grids == (((2, 2, 1), 1),)
    q = v.launches.signatures[0].args[0]
    assert (q.name, q.kind, q.dtype, q.shape) == ("Q", "tensor", "float16", (1, 2, 256, 64))
    hashes = {name: src.discover(p).variants[0].hash for name, p in sources(made).items()
              if name != "TRITON_KERNEL_DUMP"}      # a dump folder is named by the source's hash only
    assert len(set(hashes.values())) == 1, f"the store, the cache and the traces name one compile: {hashes}"


def test_reading_a_trace_writes_nothing_beside_it(made, tmp_path):
    trace = made / "trace-zstd"
    before = {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in trace.iterdir()}
    env_cache = os.environ["KINSPECT_CACHE_DIR"]
    r = run("vec-report", trace)
    assert r.exit_code == 0
    assert {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in trace.iterdir()} == before
    assert Path(env_cache, "traces").is_dir(), "the stages went to kinspect's own cache"


def test_a_trace_opens_no_file_it_names(made, tmp_path):
    """The source and stage paths a trace names are data: a process reading it opens none of them
    (checked with an audit hook), even when they exist."""
    plain = next((made / "trace-none").iterdir())
    event = json.loads(plain.read_text().splitlines()[0])
    bait = tmp_path / "bait.py"
    bait.write_text("raise SystemExit('opened')\n")
    event["payload"]["python_source"]["file_path"] = str(bait)
    event["payload"]["file_path"] = {name: str(bait) for name in event["payload"]["file_path"]}
    trace = tmp_path / "named.ndjson"
    trace.write_text(json.dumps(event) + "\n")
    code = ("import sys\nopened = []\nsys.addaudithook(lambda e, a: opened.append(str(a[0])) if e == 'open' else None)\n"
            "from kinspect.files import sources\nfrom kinspect.analysis import analyse\n"
            f"[v] = sources.discover({str(trace)!r}).variants\nanalyse(v)\n"
            f"print(sum({str(bait)!r} in p for p in opened))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT,
                         env={**os.environ, "KINSPECT_CACHE_DIR": str(tmp_path / "cache")})
    assert out.stdout.strip() == "0"


def test_upstream_structured_logging_is_read(made, tmp_path):
    """Triton's own triton/tools/structured_logging.py (upstream; not in the 3.6 or 3.9 wheels) writes
    a compilation event of the same shape with less in it: the metadata of <kernel>.json, the text
    stages, the function's source, no times, no SASS, no launches."""
    event = json.loads(next((made / "trace-none").iterdir()).read_text().splitlines()[0])
    p = event["payload"]
    meta = json.loads(p["file_content"]["attn_fwd.json"])
    upstream = {"event_type": "compilation", "pid": event["pid"], "stack": [], "timestamp": event["timestamp"],
                "payload": {"metadata": meta, "file_path": p["file_path"],
                            "file_content": {k: v for k, v in p["file_content"].items() if not k.endswith(".sass")},
                            "python_source": {k: p["python_source"][k] for k in ("file_path", "start_line",
                                                                                   "end_line", "code")}}}
    trace = tmp_path / "dedicated_log_triton_trace_.ndjson"
    trace.write_text(json.dumps(upstream, separators=(",", ":")) + "\n")
    r = report(trace)
    assert r["isa"] == "sass" and r["target"] == "cuda:90"     # from the cubin ptxas makes of its PTX
    assert "from a cubin derived: ptxas" in r["isa_stage"]["derived_by"]
    assert {v["line"] for v in r["verdicts"] if "tl.dot" in v["text"]} == DOT_LINES


def test_bad_trace_lines_are_named_and_the_rest_is_read(made, tmp_path):
    good = next((made / "trace-none").iterdir()).read_text().splitlines(keepends=True)
    trace = tmp_path / "t.ndjson"
    trace.write_text("{not json\n" + "[1, 2]\n" + good[0] + good[0][:1000])
    r = run("vec-report", trace)
    assert r.exit_code == 0 and "attn_fwd  cuda:90" in r.output
    lines = [x for x in r.output.splitlines() if x.startswith("warning:")]
    assert lines == [f"warning: {trace}:1: not JSON (JSONDecodeError: Expecting property name enclosed in double "
                     f"quotes: line 1 column 2 (char 1)); skipped",
                     f"warning: {trace}:2: not an event (a JSON list, not an object); skipped",
                     f"warning: {trace}:4: cut off (the file ends inside it); skipped"]
    cut = tmp_path / "cut.ndjson"
    cut.write_text(good[0][:5000])
    r = run("vec-report", cut)
    assert r.exit_code == 2 and r.output.count("\n") == 1
    assert r.output.startswith(f"error: no variant in '{cut}' could be read: {cut}:1: cut off")
    gz = tmp_path / "cut.ndjson.gz"
    # a full flush after the compilation event: what comes before the cut decodes whole, whatever the data
    # (cutting the last 100 bytes of one deflate block could reach back into the first line on some machines)
    packer = zlib.compressobj(wbits=31)
    first = packer.compress(good[0].encode()) + packer.flush(zlib.Z_FULL_FLUSH)
    rest = packer.compress("".join(good[1:]).encode()) + packer.flush()
    assert len(rest) > 40
    whole = gzip.compress("".join(good).encode())
    gz.write_bytes(first + rest[:len(rest) // 2])       # the compilation event whole, the launch after it cut
    r = run("vec-report", gz)
    assert r.exit_code == 0 and "attn_fwd  cuda:90" in r.output
    assert f"warning: {gz}: cut off or damaged after line 1 (EOFError: " in r.output
    gz.write_bytes(whole[:len(whole) // 2])
    r = run("vec-report", gz)
    assert r.exit_code == 2 and r.output.count("\n") == 1 and "cut off or damaged after line 0" in r.output


def test_a_stage_with_a_lone_surrogate_is_read_with_a_note(made, tmp_path):
    """JSON may escape a lone surrogate ("\\udcff"), which is no Unicode character: the stage is read with '?'
    in its place and a note says so (it stopped the listing: benchmarks/fuzz_foreign.py, input 4551 of 10,000)."""
    import json

    good = next((made / "trace-none").iterdir()).read_text().splitlines()
    event = json.loads(good[0])
    content = event["payload"]["file_content"]
    ttir = next(k for k in content if k.endswith(".ttir"))
    content[ttir] = "\udcff" + content[ttir]
    trace = tmp_path / "t.ndjson"
    trace.write_text(json.dumps(event) + "\n" + "\n".join(good[1:]) + "\n")
    r = run("vec-report", trace)
    assert r.exit_code == 0 and "attn_fwd  cuda:90" in r.output, r.output
    assert "stage ttir: characters that are not Unicode (lone surrogates) read as '?'" in r.output, r.output
    r = run("show", trace, "--stage", "ttir")
    assert r.exit_code == 0 and r.output.lstrip().startswith("?"), r.output[:300]


def test_zstd_without_a_zstd_module_is_one_line(made, monkeypatch):
    monkeypatch.setitem(sys.modules, "zstandard", None)
    monkeypatch.setitem(sys.modules, "compression", None)
    monkeypatch.setenv("KINSPECT_CACHE_DIR", str(made / "other-cache"))
    r = run("vec-report", made / "trace-zstd")
    assert r.exit_code == 2 and r.output.count("\n") == 1
    assert "zstd-compressed, and no zstd module is installed here: pip install zstandard" in r.output


def test_one_variant_of_a_trace_by_name_and_the_program_view(made, tmp_path):
    two = tmp_path / "two"
    two.mkdir()
    for p in (made / "trace-none").iterdir():
        (two / p.name).write_bytes(p.read_bytes())
    make(tmp_path / "other", f"{CORPUS / 'grid3d.py'}:bias_heads_kernel", "none")
    for p in (tmp_path / "other" / "trace-none").iterdir():
        (two / p.name).write_bytes(p.read_bytes())
    r = run("vec-report", two)
    assert r.exit_code == 0 and "attn_fwd" in r.output and "bias_heads_kernel" in r.output
    r = run("show", two, "--stage", "sass")
    assert r.exit_code == 2 and "holds 2 variants" in r.output and "kinspect show NAME --store" in r.output
    r = run("show", "bias_heads_kernel", "--stage", "sass", "--store", two)
    assert r.exit_code == 0 and "Function:bias_heads_kernel" in r.output
    r = run("diff", two, "--table", "--no-bench")
    assert r.exit_code == 0 and "attn_fwd" in r.output
    r = run("report", two, "--no-bench", "-o", tmp_path / "r.html")
    assert r.exit_code == 0 and (tmp_path / "r.html").stat().st_size > 10_000


def test_bench_and_repro_do_not_replay_a_trace(made, tmp_path):
    r = run("repro", made / "trace-none", "-o", tmp_path / "r.py")
    assert r.exit_code == 2 and "comes from a trace" in r.output and not (tmp_path / "r.py").exists()
    r = run("bench", made / "trace-none")
    assert r.exit_code == 2 and "is a trace: bench runs a kernel" in r.output
    [dump] = (made / "dump").iterdir()
    r = run("bench", dump)
    assert r.exit_code == 2 and "is a Triton dump" in r.output


def test_show_a_triton_dump_folder_with_its_control_codes(made):
    [dump] = (made / "dump").iterdir()
    r = run("show", dump, "--stage", "sass")
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[0].startswith("// control codes wait:read:write:yield:stall") and lines[1] == "Function:attn_fwd"
    assert any("HGMMA.64x64x16.F32" in x and x[:10].count(":") == 4 for x in lines)
    [store] = (made / "store" / "attn_fwd").iterdir()
    ours = run("show", store, "--stage", "sass").output.splitlines()
    coded = [m.group(1) for x in ours if (m := CONTROL.match(x))]
    theirs = [m.group(1) for x in lines[2:] if (m := CONTROL.match(x))]
    assert len(coded) > 500
    assert coded == theirs, "nvdisasm -hex decoded by kinspect gives Triton's control codes"
    raw = run("show", dump, "--stage", "sass", "--raw").output
    assert raw.startswith("Function:attn_fwd\n")


def test_one_cache_entry_or_dump_folder_is_a_variant_in_every_command(made, tmp_path):
    [dump] = (made / "dump").iterdir()
    [cache] = (made / "cache").iterdir()
    for folder in (dump, cache):
        r = run("show", folder, "--stage", "ptx")
        assert r.exit_code == 0 and ".target sm_90a" in r.output, r.output
        r = run("ls", folder)
        assert r.exit_code == 0 and "1 variant(s)" in r.output
    r = run("diff", dump, cache, "--table", "--no-bench")
    rows = [line.split() for line in r.output.splitlines()[1:3]]
    assert r.exit_code == 0 and [row[0] for row in rows] == ["1", "2"], r.output
    assert rows[0][2] == rows[1][2] and "8 hgmma" in r.output.splitlines()[1], "the same registers and matrix use"
    r = run("report", dump, cache, "--no-bench", "-o", tmp_path / "r.html")
    assert r.exit_code == 0 and "2 variants" in r.output


def test_a_dump_folder_with_half_its_files(made, tmp_path):
    """Files missing or empty: one line for each empty one, the rest read; the target from the TTGIR."""
    [dump] = (made / "dump").iterdir()
    half = tmp_path / dump.name
    half.mkdir()
    for name in ("attn_fwd.ttir", "attn_fwd.ttgir", "attn_fwd.llir"):
        (half / name).write_bytes((dump / name).read_bytes())
    (half / "attn_fwd.ptx").write_text("")
    r = run("vec-report", half)
    assert r.exit_code == 0, r.output
    assert f"warning: {half / 'attn_fwd.ptx'}: empty (0 bytes): left out" in r.output
    assert "attn_fwd  cuda:90" in r.output and "no machine-code stage" in r.output


def test_a_stage_in_a_format_kinspect_does_not_know_is_no_evidence(made, tmp_path):
    """A deliberately unknown SASS dialect beside a real TTGIR: said unreadable, with its first line
    and the formats kinspect reads, and no verdict about matrix units is drawn."""
    [dump] = (made / "dump").iterdir()
    folder = tmp_path / "unknown"
    folder.mkdir()
    (folder / "attn_fwd.ttgir").write_bytes((dump / "attn_fwd.ttgir").read_bytes())
    listing = ["; disassembly by a tool kinspect has never seen"]
    listing += [f"{n:06x}  op{n % 7}  r{n % 31}, r{(3 * n) % 31}    ; stall 2" for n in range(400)]
    (folder / "attn_fwd.sass").write_text("\n".join(listing) + "\n")
    r = run("vec-report", folder)
    assert r.exit_code == 0, r.output
    assert ("stage sass: unreadable as sass (no instructions read in its 401 lines; its first line is '; disassembly "
            "by a tool kinspect has never seen'); kinspect reads nvdisasm -c -g -gi [-hex]; cuobjdump -sass; "
            "Triton's TRITON_KERNEL_DUMP .sass") in r.output
    assert "sass: not read" in r.output
    assert "FMA" not in r.output and "tensor cores" not in r.output and "HGMMA" not in r.output
    # a few lines it does read among many it does not: still no evidence
    real = [x for x in (dump / "attn_fwd.sass").read_text().splitlines() if "\t" in x][:3]
    (folder / "attn_fwd.sass").write_text("\n".join(listing + real) + "\n")
    r = run("vec-report", folder)
    assert "only 3 instructions read in its 404 lines" in r.output and "FMA" not in r.output
    lone = tmp_path / "k.sass"
    lone.write_text("\n".join(listing) + "\n")
    r = run("vec-report", lone)
    assert r.exit_code == 2 and r.output.count("\n") == 1 and "unreadable as sass" in r.output


def test_launches_with_the_same_arguments_share_one_copy_fresh_or_from_the_index(made, tmp_path, monkeypatch):
    """Every launch event parses into new objects; the variants keep one argument list per distinct one
    (a 1 GB trace of a program's launches would otherwise hold a copy per event), and equal-looking
    values of other types (1 and 1.0) stay apart."""
    import json

    from kinspect.files import traces

    monkeypatch.setenv("KINSPECT_CACHE_DIR", str(tmp_path / "cache"))
    compile_, launch = next((made / "trace-none").iterdir()).read_text().splitlines()[:2]
    event = json.loads(launch)
    lines = [compile_]
    for grid in (1, 2, 3):
        event["grid"] = [grid]
        lines.append(json.dumps(event))
    trace = tmp_path / "t.ndjson"
    trace.write_text("\n".join(lines) + "\n")
    for _ in ("fresh", "from the index"):
        [entry], _ = traces.read(trace)
        sigs = entry.launches.signatures
        assert len(sigs) == 3 and sigs[0].args == sigs[1].args
        assert sigs[0].args is sigs[1].args is sigs[2].args
    shared = traces.Shared()
    one, other = (traces.ArgSpec("x", "float", value=1),), (traces.ArgSpec("x", "float", value=1.0),)
    assert shared.args(one) is one and shared.args(other) is other and shared.args((traces.ArgSpec("x", "float", value=1),)) is one
