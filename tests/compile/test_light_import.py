"""A kernel's module imported without its packages' __init__.py where the files show that changes
nothing (kinspect.compile.light), and imported the ordinary way everywhere else."""

import ast
import os
import textwrap

import pytest
from click.testing import CliRunner

from kinspect.cli import main
from kinspect.compile import light, loader

KERNEL = """
    import triton
    import triton.language as tl
    {imports}

    @triton.jit
    def fill_kernel(out_ptr):
        offs = tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, offs.to(tl.float32) * twice(3))
"""


def package(tmp_path, name: str, init: str, kern_imports: str, block: str = "BLOCK = tl.constexpr(64)"):
    """tmp_path/name: an __init__.py, a `heavy` module that leaves a marker file when it runs (a
    project's models, an optimizer), `utils` (a @triton.jit helper the kernel imports) and `kern` (the kernel)."""
    pkg = tmp_path / name
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text(init)
    (pkg / "heavy.py").write_text(f"open({str(tmp_path / 'heavy-ran')!r}, 'w').close()\nMODEL = 'big'\n")
    (pkg / "sub" / "__init__.py").write_text("from .. import heavy\n")
    (pkg / "utils.py").write_text("import triton\n\n@triton.jit\ndef twice(x):\n    return 2 * x\n")
    (pkg / "sub" / "kern.py").write_text(textwrap.dedent(KERNEL).format(imports=kern_imports) + f"\n{block}\n")
    return pkg / "sub" / "kern.py"


def dump(kern, out, *extra):
    r = CliRunner().invoke(main, ["dump", f"{kern}:fill_kernel", "--arg", "out_ptr=*fp32", "-t", "cuda:80",
                                  "--store", str(out), *extra], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return r.output


def ttir(out):
    [f] = out.glob("fill_kernel/*/fill_kernel.ttir")
    return f.read_text()


GATHERS = textwrap.dedent("""
    '''A project's package: it gathers its modules' names.'''
    from .heavy import MODEL
    from . import utils
    __all__ = ["MODEL", "utils"]
    __version__ = "1.0"
    try:
        from .heavy import OPTIONAL
    except ImportError:
        OPTIONAL = None
""")


def test_an_init_that_only_gathers_names_is_not_run_and_the_variant_is_the_same(tmp_path, monkeypatch):
    kern = package(tmp_path, "lightpkg_a", GATHERS, "from lightpkg_a.utils import twice")
    out = dump(kern, tmp_path / "light")
    assert "loaded   imported" in out and not (tmp_path / "heavy-ran").exists()
    monkeypatch.setenv("KINSPECT_PACKAGE_INIT", "1")
    monkeypatch.setattr(loader, "_LOADED", {})     # loads are kept per file and target in one process
    dump(kern, tmp_path / "full")
    assert (tmp_path / "heavy-ran").exists()
    assert ttir(tmp_path / "light") == ttir(tmp_path / "full") and "tensor<64xi32>" in ttir(tmp_path / "light")


def test_a_module_whose_init_would_fail_imports_when_the_init_only_gathers_names(tmp_path):
    """A serving engine's __init__ imports a dependency missing here: the kernel's module needs none
    of it, and its own module-level code runs (no definitions-only load)."""
    kern = package(tmp_path, "lightpkg_e", GATHERS + "from .server import app\n", "from ..utils import twice")
    (kern.parent.parent / "server.py").write_text("import not_a_module_kinspect_knows\napp = 1\n")
    out = dump(kern, tmp_path / "out")
    assert "loaded   imported" in out and "tensor<64xi32>" in ttir(tmp_path / "out")


def test_an_init_that_sets_anything_runs(tmp_path):
    init = GATHERS + "import os\nos.environ['LIGHTPKG_BLOCK'] = '128'\n"
    kern = package(tmp_path, "lightpkg_b", init, "import os\nfrom ..utils import twice",
                   "BLOCK = tl.constexpr(int(os.environ.get('LIGHTPKG_BLOCK', '64')))")
    try:
        dump(kern, tmp_path / "out")
    finally:
        os.environ.pop("LIGHTPKG_BLOCK", None)
    assert (tmp_path / "heavy-ran").exists() and "tensor<128xi32>" in ttir(tmp_path / "out")


def test_a_name_the_init_defines_makes_it_run(tmp_path):
    init = GATHERS + "BLOCK = 32\n"
    kern = package(tmp_path, "lightpkg_c", init, "from lightpkg_c import utils, BLOCK as B\ntwice = utils.twice",
                   "BLOCK = tl.constexpr(B)")
    dump(kern, tmp_path / "out")
    assert (tmp_path / "heavy-ran").exists() and "tensor<32xi32>" in ttir(tmp_path / "out")


def test_a_submodule_the_init_rebinds_makes_it_run(tmp_path):
    """`from .utils import twice as utils` in the __init__: `from pkg import utils` is then the helper."""
    init = GATHERS.replace("from . import utils", "from .utils import twice as utils")
    kern = package(tmp_path, "lightpkg_f", init, "from lightpkg_f import utils as twice")
    dump(kern, tmp_path / "out")
    assert (tmp_path / "heavy-ran").exists()


def test_a_read_the_files_do_not_show_stops_the_light_import_and_the_init_runs(tmp_path):
    """sys.modules[...].BLOCK is no import statement: the bare package answers it with InitNeeded,
    and the module is imported again the ordinary way."""
    init = GATHERS + "BLOCK = 32\n"
    kern = package(tmp_path, "lightpkg_d", init, "import sys\nfrom ..utils import twice",
                   "BLOCK = tl.constexpr(sys.modules['lightpkg_d'].BLOCK)")
    out = dump(kern, tmp_path / "out")
    assert "loaded   imported" in out and (tmp_path / "heavy-ran").exists()
    assert "tensor<32xi32>" in ttir(tmp_path / "out")


def test_a_main_block_that_reads_the_package_runs_its_init_then_itself_again(tmp_path):
    kern = package(tmp_path, "lightpkg_g", GATHERS + "N = 48\n", "import sys\nimport torch\nfrom ..utils import twice")
    text = kern.read_text().replace("def fill_kernel(out_ptr):", "def fill_kernel(out_ptr, n):")
    kern.write_text(text + textwrap.dedent("""
        if __name__ == "__main__":
            n = sys.modules["lightpkg_g"].N
            fill_kernel[(1,)](torch.empty(n, dtype=torch.float16), n)
    """))
    r = CliRunner().invoke(main, ["dump", f"{kern}:fill_kernel", "-t", "cuda:80", "--store", str(tmp_path / "out")],
                           catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert "loaded   imported" in r.output and "by its __main__ block" in r.output, r.output
    assert (tmp_path / "heavy-ran").exists() and "!tt.ptr<f16>" in ttir(tmp_path / "out")


def test_a_from_call_whose_packages_inits_read_each_others_names(tmp_path):
    # cute-kernels' shape: the top __init__ imports a module that reads a name of `pkg.ops`, another
    # skipped package; --from calls a function `pkg.ops` defines. run_skipped ran the top __init__
    # first while `pkg.ops` was still bare, and the InitNeeded reached the user
    top = tmp_path / "lightpkg_chain"
    (top / "ops").mkdir(parents=True)
    (top / "__init__.py").write_text("from .inductor import enable\n")
    (top / "inductor.py").write_text("from .ops import fill\n\ndef enable():\n    return fill\n")
    (top / "ops" / "__init__.py").write_text("from .kern import fill_kernel\n\ndef fill(x):\n"
                                             "    fill_kernel[(1,)](x)\n    return x\n")
    (top / "ops" / "kern.py").write_text(textwrap.dedent('''
        import triton
        import triton.language as tl

        @triton.jit
        def fill_kernel(out_ptr):
            offs = tl.arange(0, 64)
            tl.store(out_ptr + offs, offs.to(out_ptr.dtype.element_ty))
    '''))
    call = "__import__('lightpkg_chain.ops', fromlist=['_']).fill(__import__('torch').empty(64).half())"
    r = CliRunner().invoke(main, ["dump", f"{top / 'ops' / 'kern.py'}:fill_kernel", "-t", "cuda:80", "--from", call,
                                  "--store", str(tmp_path / "out")], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert "!tt.ptr<f16>" in ttir(tmp_path / "out")


@pytest.mark.parametrize("text, gathers", [
    (GATHERS, True),
    ("import torch\nif torch.cuda.is_available():\n    from .cuda import ops\nlogger = logging.getLogger(__name__)\n",
     True),
    ("import os\nos.environ['X'] = '1'\n", False),
    ("from . import env\nif env.setup():\n    from . import ops\n", False),
    ("from .registry import load\nload()\n", False),
    ("from pkgutil import extend_path\n__path__ = extend_path(__path__, __name__)\n", False),
    ("def once(f):\n    return f\n@once\ndef g():\n    pass\n", False),
    ("import torch\nlib = torch.library.Library('x', 'DEF')\n", False),
    ("def __getattr__(name):\n    return 1\n", False),
])
def test_which_inits_only_gather_names(tmp_path, text, gathers):
    f = tmp_path / "__init__.py"
    f.write_text(text)
    assert light._gathers_names(f) is gathers, ast.dump(ast.parse(text))
