"""Security properties of the source, checked on its syntax tree so they stay true:
- subprocesses only with argument lists: no shell=True, no command string, no os.system/os.popen;
- no archive unpacking without a path filter (kinspect unpacks no archive today: tarfile/zipfile
  extraction or shutil.unpack_archive appearing without `filter=` fails here, so a future one must
  check member paths against traversal).
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
SCANNED = ("kinspect", "kernels", "samples", "benchmarks")

SUBPROCESS_CALLS = {"run", "call", "check_call", "check_output", "Popen", "getoutput", "getstatusoutput"}
SHELL_ONLY = {("subprocess", "getoutput"), ("subprocess", "getstatusoutput"), ("os", "system"), ("os", "popen"),
              ("os", "execl"), ("os", "execlp"), ("os", "spawnl"), ("os", "spawnlp")}
UNPACKERS = {"extractall", "extract", "unpack_archive"}


def _dotted(node: ast.AST) -> tuple[str, ...]:
    """`subprocess.run` -> ("subprocess", "run"); a bare name -> (name,)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.insert(0, node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.insert(0, node.id)
    return tuple(parts)


def _is_string(node: ast.AST) -> bool:
    return (isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str))
            or (isinstance(node, ast.BinOp) and (_is_string(node.left) or _is_string(node.right))))


def problems(source: str, name: str = "<src>") -> list[str]:
    """Every call in `source` that breaks the rules, as 'file:line: what'."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        path = _dotted(node.func)
        where = f"{name}:{node.lineno}"
        if path[-2:] in SHELL_ONLY or path in SHELL_ONLY:
            found.append(f"{where}: {'.'.join(path)} runs a shell")
        if path[-1:] and path[-1] in SUBPROCESS_CALLS and (len(path) == 1 or path[-2] == "subprocess"):
            if any(k.arg == "shell" and not (isinstance(k.value, ast.Constant) and k.value.value is False)
                   for k in node.keywords):
                found.append(f"{where}: {'.'.join(path)} with shell=")
            if node.args and _is_string(node.args[0]):
                found.append(f"{where}: {'.'.join(path)} given a command string, not an argument list")
        if path[-1:] and path[-1] in UNPACKERS and not any(k.arg == "filter" for k in node.keywords):
            found.append(f"{where}: {'.'.join(path) or path[-1]} unpacks an archive without a member filter")
    return found


def test_the_source_follows_the_rules():
    found = []
    for folder in SCANNED:
        for path in sorted((ROOT / folder).rglob("*.py")):
            found += problems(path.read_text(), str(path.relative_to(ROOT)))
    assert not found, "\n".join(found)


def test_the_source_runs_subprocesses_at_all():
    """The scan sees the real calls (it would pass vacuously on a wrong tree)."""
    calls = [(p, n.lineno) for folder in SCANNED for p in (ROOT / folder).rglob("*.py")
             for n in ast.walk(ast.parse(p.read_text())) if isinstance(n, ast.Call)
             and _dotted(n.func)[-2:-1] == ("subprocess",)]
    assert len(calls) >= 5, calls


@pytest.mark.parametrize("bad", [
    "import subprocess\nsubprocess.run('nvdisasm ' + path, shell=True)",
    "import subprocess\nsubprocess.check_output(f'objdump -d {path}')",
    "import subprocess\nsubprocess.Popen(argv, shell=flag)",
    "import os\nos.system('ls')",
    "import os\nos.popen('ls')",
    "import tarfile\ntarfile.open(p).extractall(dest)",
    "import zipfile\nzipfile.ZipFile(p).extractall(dest)",
    "import shutil\nshutil.unpack_archive(p, dest)",
])
def test_the_checker_catches(bad):
    assert problems(bad), bad


@pytest.mark.parametrize("good", [
    "import subprocess\nsubprocess.run([tool, '-c', str(path)], capture_output=True)",
    "import subprocess\nsubprocess.run(argv, shell=False)",
    "import tarfile\ntarfile.open(p).extractall(dest, filter='data')",
    "d = {}\nd.get('x')",
])
def test_the_checker_passes(good):
    assert not problems(good), good
