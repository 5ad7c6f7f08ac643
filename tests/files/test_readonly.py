"""Every command that reads a Triton cache or dump folder leaves it byte-identical: names, modes,
sizes, mtimes and bytes of every file (tree_digest). One row per command in COMMANDS; a new
reading command is one more row.

The folders are real: a Triton cache filled by triton.compile (cuda:90 and hip:gfx942), a
TRITON_KERNEL_DUMP folder Triton wrote itself, and copies of the triton-cpu / triton-shared
fixtures. kinspect's own output goes to a store and a cache of its own (checked to be used).
"""

import os
import shutil

import pytest
from click.testing import CliRunner

from kinspect.cli import main
from tests.helpers import TESTS, tree_digest

CPU = TESTS / "fixtures" / "cpu"
SIG = {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """{name: folder}: the read-only inputs, each made once."""
    import triton
    from triton import knobs
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from tests.jit_kernels import _double

    root = tmp_path_factory.mktemp("readonly")
    made = {"cache": root / "cache", "cache1": root / "cache1", "dump": root / "dump"}
    for name, targets in (("cache", [GPUTarget("cuda", 90, 32), GPUTarget("hip", "gfx942", 64)]),
                          ("cache1", [GPUTarget("cuda", 90, 32)])):
        with knobs.cache.scope(), knobs.compilation.scope():
            knobs.cache.dir = str(made[name])
            if name == "cache1":        # Triton writes a TRITON_KERNEL_DUMP folder beside it
                knobs.cache.dump_dir = str(made["dump"])
                knobs.compilation.dump_ir = True
            for t in targets:
                triton.compile(ASTSource(_double, SIG, constexprs={"BLOCK": 64}), target=t)
    assert list(made["dump"].rglob("*.ptx")), "Triton wrote no dump folder"
    for name in ("triton-shared-riscv-softmax", "triton-cpu-x86-avx512", "triton-cpu-arm64-neon"):
        made[name] = root / name
        shutil.copytree(CPU / name, made[name])
    return made


def x86_file(f):
    return str(f["triton-cpu-x86-avx512"] / "dot_4x16_16x4_torch.float32.asm")


# (id, argv from the folders) -- every command that reads a Triton cache, a dump or a CPU backend's folder
COMMANDS = [
    ("ls cache", lambda f: ["ls", f["cache"]]),
    ("ls dump", lambda f: ["ls", f["dump"]]),
    ("ls triton-shared", lambda f: ["ls", f["triton-shared-riscv-softmax"]]),
    ("ls default (TRITON_CACHE_DIR)", lambda f: ["ls"]),
    ("vec-report cache", lambda f: ["vec-report", f["cache"], "--json"]),
    ("vec-report cache --lines", lambda f: ["vec-report", f["cache1"], "--lines"]),
    ("vec-report dump", lambda f: ["vec-report", f["dump"]]),
    ("vec-report default (TRITON_CACHE_DIR)", lambda f: ["vec-report"]),
    ("vec-report triton-shared --retarget", lambda f: ["vec-report", f["triton-shared-riscv-softmax"],
                                                       "--retarget", "spacemit-x60"]),
    ("vec-report triton-cpu file", lambda f: ["vec-report", x86_file(f)]),
    ("diff cache", lambda f: ["diff", f["cache"], "--no-bench"]),
    ("diff triton-shared --retarget", lambda f: ["diff", f["triton-shared-riscv-softmax"] / "ll.ir",
                                                 "--retarget", "generic-rv64,spacemit-x60", "--no-bench"]),
    ("diff two cpu files", lambda f: ["diff", x86_file(f), f["triton-cpu-x86-avx512"] / "sum_64_torch.float32_mask.asm",
                                      "--no-bench"]),
    ("show cache sass (derived)", lambda f: ["show", f["cache1"], "--stage", "sass"]),
    ("show cache ptx --lines", lambda f: ["show", f["cache1"], "--stage", "ptx", "--lines"]),
    ("show dump ttgir", lambda f: ["show", f["dump"], "--stage", "ttgir"]),
    ("show triton-shared llir --lines", lambda f: ["show", f["triton-shared-riscv-softmax"], "--stage", "llir",
                                                   "--lines"]),
    ("report cache", lambda f: ["report", f["cache"], "--no-bench"]),
    ("report dump", lambda f: ["report", f["dump"], "--no-bench"]),
    ("report triton-shared --retarget", lambda f: ["report", f["triton-shared-riscv-softmax"] / "ll.ir",
                                                   "--retarget", "spacemit-x60", "--no-bench"]),
]


@pytest.mark.parametrize("argv", [c[1] for c in COMMANDS], ids=[c[0] for c in COMMANDS])
def test_reading_commands_leave_the_folders_byte_identical(argv, folders, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)                        # no ./kinspect-out: the default is the Triton cache
    monkeypatch.setenv("TRITON_CACHE_DIR", str(folders["cache"]))
    own_cache = tmp_path / "kinspect-cache"
    monkeypatch.setenv("KINSPECT_CACHE_DIR", str(own_cache))
    before = {name: tree_digest(p) for name, p in folders.items()}
    args = [str(a) for a in argv(folders)]
    if args[0] in ("vec-report", "diff", "show"):
        args += ["--store", str(tmp_path / "out")]
    if args[0] == "report":
        args += ["-o", str(tmp_path / "r.html"), "--store", str(tmp_path / "out")]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    assert {name: tree_digest(p) for name, p in folders.items()} == before
    assert sorted(set(os.listdir(tmp_path)) - {"r.html"}) in (["kinspect-cache"], []), os.listdir(tmp_path)
    if args[:2] == ["show", str(folders["cache1"])] and "sass" in args:
        assert list(own_cache.rglob("*.sass")), "derived SASS went to kinspect's own cache"


def test_the_table_covers_every_reading_command():
    """Each command that takes a folder (all but dump, bench, capture, targets and schema, which take none,
    and repro and tune, whose input is a captured variant in a kinspect store: a Triton cache has no launch
    records; tune writes its result and candidates into that store) has a row."""
    from kinspect.cli import main as group

    writers = {"dump", "bench", "capture", "targets", "schema", "repro", "tune"}
    readers = set(group.commands) - writers
    assert readers <= {c[0].split()[0] for c in COMMANDS}, readers


def test_a_command_points_triton_away_from_the_users_cache_and_back(tmp_path, monkeypatch):
    """While a command runs, Triton's own files (the driver helpers a GPU host builds on first use)
    go to kinspect's cache; reading still finds the user's cache; the environment is restored."""
    import click

    from kinspect.files import sources
    from kinspect.cli import main as group

    users = tmp_path / "users-triton"
    monkeypatch.setenv("TRITON_CACHE_DIR", str(users))
    monkeypatch.setenv("KINSPECT_CACHE_DIR", str(tmp_path / "kc"))
    seen = {}

    @group.command("probe-env")
    def probe():
        """(test only)"""
        from triton import knobs

        seen.update(triton=knobs.cache.dir, user=str(sources.triton_cache_dir()),
                    child=sources.users_environment(os.environ).get("TRITON_CACHE_DIR"))
        click.echo("ok")

    try:
        r = CliRunner().invoke(group, ["probe-env"])
    finally:
        group.commands.pop("probe-env")
    assert r.exit_code == 0, r.output
    assert seen == {"triton": str(tmp_path / "kc" / "triton-runtime"), "user": str(users), "child": str(users)}
    assert os.environ["TRITON_CACHE_DIR"] == str(users) and sources.USER_CACHE_ENV not in os.environ
