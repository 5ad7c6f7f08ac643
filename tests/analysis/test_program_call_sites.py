"""A library kernel's rows name the user's line that launched it, not the library's source: the first
frame outside Triton, torch, kinspect, the standard library and the kernel's own package, recorded at the
first launch of each signature key (a captured program, real launches under the interpreter)."""

import json
import sys
import textwrap

from click.testing import CliRunner

from kinspect.cli import main
from kinspect.files.store import read_records

LIBRARY = textwrap.dedent('''
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def _scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2, mask=m)


    def _launch(x):
        y = torch.empty_like(x)
        n = x.numel()
        _scale_kernel[(triton.cdiv(n, 256),)](x, y, n, BLOCK=256)
        return y


    def scale(x):                       # the library's public function: its frames are not call sites
        return _launch(x)
''')

PROGRAM = textwrap.dedent('''
    import torch
    import mylib.ops as ops


    def block(x):
        return ops.scale(x)             # line 7: the second call site


    x = torch.randn(1000)
    for _ in range(3):
        y = ops.scale(x)                # line 12: the first, 3 calls
    z = block(torch.randn(600))
''')


def test_call_sites_are_the_users_lines(tmp_path):
    (tmp_path / "mylib").mkdir()
    (tmp_path / "mylib" / "__init__.py").write_text("")
    (tmp_path / "mylib" / "ops.py").write_text(LIBRARY)
    prog = tmp_path / "train.py"
    prog.write_text(PROGRAM)
    store = tmp_path / "store"
    r = CliRunner().invoke(main, ["capture", "--interpret", "-t", "cuda:90", "--store", str(store), "--",
                                  sys.executable, str(prog)])
    assert r.exit_code == 0, r.output
    (v,) = [v for v in read_records(store) if v.kernel == "_scale_kernel"]
    sites = {(s.site.file, s.site.line, s.site.function): s.calls for s in v.launches.signatures}
    assert sites == {(str(prog), 12, "<module>"): 3, (str(prog), 7, "block"): 1}, sites

    # a second kernel makes the store a program: its table names the call site, -k lists them
    (tmp_path / "other.py").write_text(textwrap.dedent('''
        import torch, triton, triton.language as tl

        @triton.jit
        def neg(x_ptr, n, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, -tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

        neg[(1,)](torch.randn(8), 8, BLOCK=8)
    '''))
    r = CliRunner().invoke(main, ["capture", "--interpret", "-t", "cuda:90", "--store", str(store), "--",
                                  sys.executable, str(tmp_path / "other.py")])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["vec-report", str(store), "-k", "_scale"], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    at = lines.index("  _scale_kernel: launched from 2 call sites")
    assert lines[at + 1].split() == ["3", "calls", f"{prog}:12", "in", "<module>"]
    assert lines[at + 2].split() == ["1", "calls", f"{prog}:7", "in", "block"]
    d = json.loads(CliRunner().invoke(main, ["vec-report", str(store), "--json"]).stdout)
    k = {x["kernel"]: x for x in d["kernels"]}
    assert [(s["line"], s["calls"]) for s in k["_scale_kernel"]["call_sites"]] == [(12, 3), (7, 1)]


# -- variants explained ------------------------------------------------------------------------------

import triton  # noqa: E402
import triton.language as tl  # noqa: E402


@triton.jit
def _halve(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m) * 0.5, mask=m)


@triton.jit
def _twice(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


def test_a_variant_compiled_while_the_program_ran_is_named_with_its_trigger(tmp_path):
    """n=4096 (divisible by 16) launches first; n=1000 in the first step and an unaligned x in the third need
    other specializations, each compiled at its launch: the third step's is a recompile while running,
    named with the arguments that caused it; the first step's is not."""
    import torch
    from triton import knobs

    import kinspect
    from kinspect.analysis.variants import explain
    from kinspect.compile.driver import fresh_binders
    from tests.dryrun import dry_run

    x, y = torch.empty(4096), torch.empty(4096)
    with knobs.cache.scope(), fresh_binders(_halve), fresh_binders(_twice):
        knobs.cache.dir = str(tmp_path / "triton-cache")
        with dry_run(), kinspect.capture(tmp_path / "out"):
            for step in range(3):                          # a step: _halve then _twice
                _halve[(8,)](x, y, 4096, BLOCK=512)
                if step == 0:
                    _halve[(2,)](x, y, 1000, BLOCK=512)     # within the first step: not a recompile
                if step == 2:
                    _halve[(8,)](x[1:], y, 4095, BLOCK=512)  # x unaligned, n odd, in step 3: a recompile
                _twice[(8,)](x, y, 4096, BLOCK=512)
    variants = [v for v in read_records(tmp_path / "out") if v.kernel == "_halve"]
    assert len(variants) == 3
    from kinspect.analysis.variants import first_step_end, step_launches

    every = list(read_records(tmp_path / "out"))
    assert list(step_launches(every).values()) == [8 / 3], "8 launches over 3 calls of the first kernel"
    why = explain(variants, first_step_end(every), step_launches(every))
    assert [w.while_running for w in why] == [False, False, True]
    assert why[0].differs == ("n%16=0", "x_ptr aligned") and why[2].differs == ("n%16!=0", "x_ptr unaligned")
    assert why[2].trigger == "a launch with x_ptr: float32[4095] strides (1), n=4095 (before: x_ptr: float32[4096] " \
                             "strides (1), n=4096)"

    from kinspect.analysis.sol import for_program
    from kinspect.api import program
    from kinspect.core.records import to_json
    from kinspect.render.json import sol_json
    from kinspect.render.program import variant_lines

    variants = list(read_records(tmp_path / "out"))
    sol = to_json(sol_json(for_program(variants)))
    assert list(sol["compiled_while_running"]) == ["_halve"]
    assert sol["compiled_while_running"]["_halve"][0]["trigger"] == why[2].trigger
    view = program(variants, top=0)
    assert view.kernel("_halve").variants_explained == tuple(why)
    lines = variant_lines(view.kernel("_halve"))
    assert lines[0] == "  _halve: 3 variants" and lines[1].endswith(": n%16=0, x_ptr aligned")
    assert lines[3].endswith("x_ptr unaligned; ! compiled while the program was running the kernel, by " + why[2].trigger)
