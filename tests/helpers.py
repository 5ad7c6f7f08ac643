"""Helpers the parser and report tests share."""

import ast
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from kinspect.cli import main
from kinspect.files.ceilings import Ceilings
from kinspect.ir.records import Instruction

TESTS = Path(__file__).parent          # this folder
ROOT = TESTS.parent                     # the repository
KERNELS = ROOT / "kernels"
BLOCK = dict(BLOCK_SIZE=64)     # the size the real-output tests compile (one compile each)


def regex_examples(module) -> dict[str, list[str]]:
    """{NAME: [example lines]} from the comment lines right above each `NAME = re.compile(`.
    An example written as a quoted Python literal ("\\x00...") is unescaped."""
    source = Path(module.__file__).read_text().splitlines()
    found = {}
    for i, line in enumerate(source):
        if (m := re.match(r"^(_?[A-Z][A-Z0-9_]*) = re\.compile\(", line)):
            examples, j = [], i - 1
            while j >= 0 and source[j].startswith("# "):
                text = source[j][2:]
                examples.insert(0, ast.literal_eval(text) if text.startswith('"') else text)
                j -= 1
            found[m[1]] = examples
    return found


def instructions(records):
    return [r for r in records if isinstance(r, Instruction)]


def kernel_line(text: str) -> int:
    """The line of `text` in the shipped fused kernel, read from the file."""
    lines = (KERNELS / "fused_mm_softmax.py").read_text().splitlines()
    return next(n for n, line in enumerate(lines, 1) if text in line)


def dot_line() -> int:
    return kernel_line("c = tl.dot(a, b)")


# a progress line (kinspect.cli.progress): printed to stderr once a step has run 2 s, so its presence depends on
# the machine's speed; not a part of what a command says went wrong
PROGRESS = re.compile(r"kinspect: [a-z ]+ \d+(/\d+)?( \(.*\))?$")


def run(*args, env=None):
    """`kinspect ARGS` in this process (click's CliRunner); arguments may be paths."""
    return CliRunner().invoke(main, [str(a) for a in args], env=env)


def run_ok(*args):
    """run(), checked to exit 0 (its output in the failure's message)."""
    r = run(*args)
    assert r.exit_code == 0, r.output
    return r


def run_raising(*args):
    """run(), an exception kinspect raises left to propagate (its traceback in the test's report)."""
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def one_error_line(r, *needles) -> str:
    """A CliRunner result that is one `error:` line holding each needle, exit code 2 (progress lines aside)."""
    assert r.exit_code == 2, r.output
    lines = [line for line in r.output.strip().splitlines() if not PROGRESS.match(line)]
    assert len(lines) == 1 and lines[0].startswith("error: "), r.output
    assert "Traceback" not in r.output, r.output
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


# -- a second Triton (.ci/run installs it: python -m venv .venv-t36 && .venv-t36/bin/pip install torch triton==3.6.0
#    "numpy<2.3" click pygments pyelftools: Triton 3.6's interpreter fails on numpy 2.3+; the rest is kinspect's core)

OTHER_TRITON_VENV = Path(__file__).parent.parent / ".venv-t36"


def other_triton() -> tuple[str, str]:
    """(python, its Triton version) of the second venv; the test skips, saying why, where there is none."""
    import subprocess

    import pytest

    python = OTHER_TRITON_VENV / "bin" / "python"
    if not python.exists():
        pytest.skip(f"no second Triton: {OTHER_TRITON_VENV} is missing (.ci/run installs Triton 3.6 there)")
    proc = subprocess.run([str(python), "-c", "import triton, torch, numpy, click, pygments, elftools; print(triton.__version__)"],
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        pytest.skip(f"the second Triton in {OTHER_TRITON_VENV} does not import: {proc.stderr.strip()[-300:]}")
    return str(python), proc.stdout.strip()


def kinspect_path(tmp: Path) -> str:
    """A folder holding only this checkout's kinspect package: another interpreter's PYTHONPATH (this venv's
    site-packages would bring this Triton with it)."""
    folder = tmp / "kinspect-src"
    folder.mkdir(exist_ok=True)
    link = folder / "kinspect"
    if not link.exists():
        link.symlink_to(Path(__file__).parent.parent / "kinspect")
    return str(folder)


# A user kernel with a module-level constexpr and kinspect_examples (grid function, bytes formula): what
# the planted-store tests (tests/replay/test_replay_safe.py, tests/gpu/test_replay_safe_live.py) dump and plant.
STORE_NAMED_KERNEL = '''\
import triton
import triton.language as tl

SCALE = tl.constexpr(2.0)


@triton.jit
def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m) * SCALE, mask=m)


kinspect_examples = {"k": {"args": {"x_ptr": "*fp32:N", "y_ptr": "*fp32:N", "n": "i32:N"},
                           "grid": lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),),
                           "bytes": lambda a: 2 * a["x_ptr"].numel() * 4}}
'''.replace("N", "4096")


def store_named_kernel(n: int) -> str:
    """STORE_NAMED_KERNEL with its example at `n` elements."""
    return STORE_NAMED_KERNEL.replace("4096", str(n))
KERNEL_LINE = STORE_NAMED_KERNEL[:STORE_NAMED_KERNEL.index("@triton.jit")].count("\n") + 1


class PlantedStore:
    """A store of user-kernel variants whose records are edited to name a marker-writing evil.py: the first
    variant's inside the store, the second's outside it (the kernel's own file removed)."""

    def __init__(self, store: Path, tmp: Path):
        self.store, self.tmp = store, tmp
        self.markers = [tmp / "MARKER-inside", tmp / "MARKER-outside"]
        outside = tmp / "outside"
        outside.mkdir()
        self.evil = [store / "evil.py", outside / "evil.py"]
        for evil, marker in zip(self.evil, self.markers):
            evil.write_text(self.evil_text(marker))
        for i, folder in enumerate(self.folders()):
            self.edit(folder, lambda d, i=i: self.point(d, self.evil[i]))

    @staticmethod
    def evil_text(marker: Path) -> str:
        """A module of definitions only, as kinspect's importability check reads one (an assignment,
        then the captured kernel at its captured line), whose assignment writes the marker."""
        head = f"MARK = open({str(marker)!r}, 'w').write('imported')\nimport triton\nimport triton.language as tl\n"
        body = STORE_NAMED_KERNEL[STORE_NAMED_KERNEL.index("@triton.jit"):STORE_NAMED_KERNEL.index("kinspect_examples")]
        return head + "\n" * (KERNEL_LINE - 1 - head.count("\n")) + body + "SCALE = tl.constexpr(2.0)\n"

    @staticmethod
    def point(d: dict, evil: Path) -> None:
        d["user"]["kernel"] = f"{evil}:k"
        d["source"]["file"] = str(evil)

    def folders(self) -> list[Path]:
        return sorted((self.store / "k").glob("cuda-*"), key=lambda p: int(p.name.split("BLOCK-")[1].split("_")[0]))

    @staticmethod
    def edit(folder: Path, change) -> None:
        f = folder / "record.json"
        d = json.loads(f.read_text())
        change(d)
        f.write_text(json.dumps(d))

    def untouched(self) -> None:
        for m in self.markers:
            assert not m.exists(), f"{m.name}: a file the store names was imported"


# -- moved here from the test modules that other modules imported them from --------------------------------

def tree_digest(root: Path) -> str | None:
    """Names, modes, sizes, mtimes and bytes of everything under root; None when it is absent."""
    if not root.exists():
        return None
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in sorted(os.walk(root)):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            p = Path(dirpath, name)
            st = p.lstat()
            h.update(f"{p.relative_to(root)}|{st.st_mode}|{st.st_size}|{st.st_mtime_ns}".encode())
            if p.is_file():
                h.update(p.read_bytes())
    return h.hexdigest()


H200 = Ceilings("NVIDIA H200", 4249.0, {"bfloat16": 685.0, "float16": 664.0, "float32": 362.0}, "2026-11-25",
                source="the test's")


def sections(path: Path) -> dict[str, str]:
    """The `//===--NAME---` sections of a triton-cpu combined file (kinspect.files.sources.sections)."""
    from kinspect.files.sources import sections as split

    return split(path.read_text())


def riscv_object(ll: Path, out: Path) -> Path:
    """An ELF object compiled by LLVM from real IR with spine-triton 3.6's flags for the X60 (opt's
    forced vector width, then llc -O3 -mcpu=spacemit-x60 with PIC and the default code model, so
    calls are `call sym` with R_RISCV_CALL_PLT relocations as llc makes them)."""
    import llvmlite.binding as llvm

    from kinspect.backends import retarget

    retarget._init()
    t = retarget.PRESETS["spine-triton"]
    for name, value in {**retarget.OPTION_DEFAULTS, **dict(t.options)}.items():  # options are process-wide
        llvm.set_option("kinspect", f"-{name}={value}")
    module = llvm.parse_assembly(retarget.neutral_ir(ll.read_text()))
    module.triple = t.triple
    tm = llvm.Target.from_triple(t.triple).create_target_machine(cpu=t.cpu, features=t.features, opt=3, reloc="pic",
                                                                  codemodel="default")
    module.data_layout = str(tm.target_data)
    builder = llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options(speed_level=3))
    builder.getModulePassManager().run(module, builder)
    out.write_bytes(tm.emit_object(module))
    for name, value in retarget.OPTION_DEFAULTS.items():
        llvm.set_option("kinspect", f"-{name}={value}")
    return out


# -- a CPU backend plugin Triton discovers as it discovers spine-triton (tests/backends/test_spine_live.py,
#    tests/gpu/test_spine_beside_gpu.py) ---------------------------------------------------------------

PLUGIN = ROOT / "tests" / "spine_plugin" / "kinspect_spine_test"
SHARED = TESTS / "fixtures" / "cpu" / "triton-shared-riscv-softmax"

SCRIPT = ROOT / "tests" / "spine_plugin" / "softmax_k1.py"


def make_spine(tmp_path_factory):
    """spine's value, made outside a fixture too (tests/gpu/test_spine_beside_gpu.py runs it in a thread)."""
    tmp = tmp_path_factory.mktemp("spine")
    plugin = tmp / "plugin"
    shutil.copytree(PLUGIN, plugin / PLUGIN.name)
    info = plugin / "kinspect_spine_test-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: kinspect-spine-test\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[triton.backends]\nspine_triton = kinspect_spine_test\n")
    stages = tmp / "stages"
    stages.mkdir()
    shutil.copyfile(SHARED / "ttshared.mlir", stages / "linalgdir.mlir")
    shutil.copyfile(SHARED / "ll.ir", stages / "ll.ir")
    riscv_object(SHARED / "ll.ir", stages / "kernel.o")
    script = tmp / "softmax_k1.py"
    shutil.copyfile(SCRIPT, script)
    path = [str(plugin), str(ROOT), os.environ.get("PYTHONPATH")]     # what the shell had stays (a GPU host's wheels)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, path)),
           "KINSPECT_TEST_SPINE_STAGES": str(stages), "TRITON_CACHE_DIR": str(tmp / "triton-cache"),
           "KINSPECT_CACHE_DIR": str(tmp / "kinspect-cache"), "NO_COLOR": "1"}
    return env, script


def kinspect_process(env, *args, timeout=600):
    """`python -m kinspect ARGS` in a child process with `env` (a backend plugin Triton discovers at import)."""
    return subprocess.run([sys.executable, "-m", "kinspect", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=timeout, cwd=ROOT)
