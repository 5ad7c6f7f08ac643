"""The project's own tests, run with every kernel launch recorded and none run, until the kernel
asked for has launched once: the values its test really passes it.

Reading a test's text (kinspect.compile.test_calls) covers tests that spell their calls out; many do
not: the callee is a parametrized variable (`function(x)` over `[rms_norm, torch.compile(rms_norm)]`),
the cases come from the project's own generator, the inputs from a helper class. Running the test
covers those, as `kinspect capture --interpret` would, without the interpreter: pytest collects and
parametrizes it in this process (its fixtures, conftest.py and unittest classes as the project's own
run has them), under the target's driver and device answers (kinspect.compile.loader.guarded), and
the first launch of the kernel ends the run (file_launches.Enough).

What keeps that within bounds: only test files (and functions) whose text calls the kernel's
wrappers or the project's code that reaches it are run, from the project's folder; TEST_BUDGET_S in
all; no plugin the project's environment installs is loaded, its `addopts` are not applied, nothing
is written to .pytest_cache or __pycache__, no C++/CUDA extension is built (torch.utils.cpp_extension
refuses), torch.compile leaves functions as they are, and after, the environment, current folder,
torch's defaults and sys.path are put back and the test modules it imported dropped from sys.modules.
Every kernel launch is recorded and runs nothing, so the tests' own comparisons never run on the
kernel's output: the run is stopped at the launch.

A node is a pytest node id (`tests/test_norm.py::test_rms[fp16-1024]`), relative to the project's
folder, as `kinspect dump --from NODE` takes it again.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import sys
import threading
import time
from pathlib import Path

from kinspect.compile.file_launches import MAX_RECORDED, Enough, FileLaunchRecorder
from kinspect.compile.loader import LoadedFile, Ran, TimeUp, budget, guarded, main_block
from kinspect.compile.test_calls import is_example_file, is_test_file

# seconds the tests may run in all, per kernel, before the first launch of the kernel
TEST_BUDGET_S = 30
# test files run at most per kernel, and after them files of its benchmarks and examples
# (test_calls.is_example_file), where the tests did not launch it (a test module importing a package
# that is not installed: qwen3-moe-fused's tests all import bitsandbytes, its benchmarks do not)
MAX_TEST_FILES = 3
MAX_EXAMPLE_FILES = 2
_RUNS: dict[tuple, Ran] = {}
_ACTIVE: list = []


def chosen(files: list[str]) -> list[str]:
    """The files to run of `files` (project-relative paths, in the order to run them): the first
    MAX_TEST_FILES tests, then the first MAX_EXAMPLE_FILES benchmarks and examples."""
    files = list(dict.fromkeys(files))
    tests = [f for f in files if not is_example_file(Path(f))][:MAX_TEST_FILES]
    return tests + [f for f in files if is_example_file(Path(f))][:MAX_EXAMPLE_FILES]


def is_node(text: str) -> bool:
    """Whether `text` names a pytest node (`tests/test_x.py::test_y[case]`, or a test file), not code
    to evaluate."""
    return text.partition("::")[0].strip().endswith(".py")


def own_tests(file: Path) -> list[str]:
    """The test functions and classes a kernel's own file defines at top level (`def test_op(...)`
    beside the kernel, as pytest would collect them from it)."""
    import ast

    try:
        tree = ast.parse(file.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return []
    return [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and
            n.name.startswith("test") or isinstance(n, ast.ClassDef) and n.name.startswith("Test")]


def available() -> bool:
    try:
        import pytest  # noqa: F401
    except ImportError:
        return False
    return True


class _Plugin:
    """Names the running test in the recorder's launches, and ends the session once the kernel has
    launched or the time is up."""

    def __init__(self, recorder: FileLaunchRecorder, deadline: float):
        self.recorder = recorder
        self.deadline = deadline
        self.collected = 0
        self.errors: list[str] = []
        self.passed_over: dict[str, str] = {}     # autouse fixtures that failed: name -> error
        self.conftest = ""          # why pytest could not start with the project's conftest.py files
        # loader.budget's alarm is set (it is only in the main thread)
        self.alarm = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()

    def pytest_collectstart(self, collector):
        if type(collector).__name__ == "Module":        # its module-level code may launch (a script)
            self.recorder.where = f"the test {collector.nodeid}"

    def pytest_collection_modifyitems(self, items):
        self.collected = len(items)

    def pytest_collectreport(self, report):
        if report.failed:
            self.errors.append(f"collecting {report.nodeid or 'the tests'} failed: {_last_line(report.longreprtext)}")

    def pytest_runtest_protocol(self, item, nextitem):
        left = self.deadline - time.monotonic()
        if self.recorder.stopped or left <= 0:
            item.session.shouldstop = "kinspect has the launch" if self.recorder.stopped else "time is up"
            return True            # not run
        if self.alarm:
            signal.setitimer(signal.ITIMER_REAL, left)     # budget's alarm, again for what is left (a
            #                                                test may have used the alarm itself)
        self.recorder.where = f"the test {item.nodeid}"
        return None

    def pytest_fixture_setup(self, fixturedef, request):
        """A fixture every test gets without naming it (`autouse`) that fails, passed over: a
        conftest's session fixtures that download models (axolotl's) fail offline, and the test's
        launch does not need them. The test's own fixtures still fail it."""
        try:
            return (yield)
        except Exception as e:
            if not getattr(fixturedef, "_autouse", False) or type(e).__name__ == "Skipped":
                raise
            try:
                fixturedef.cached_result = (None, fixturedef.cache_key(request), None)
            except Exception:
                raise e from None
            self.passed_over.setdefault(fixturedef.argname, type(e).__name__)
            return None

    def pytest_runtest_logreport(self, report):
        if self.recorder.stopped:
            return
        if report.failed and not self.errors:
            self.errors.append(f"{report.nodeid} failed: {_last_line(report.longreprtext)}")


def _last_line(text: str) -> str:
    lines = [x.strip() for x in (text or "").splitlines() if x.strip()]
    errors = [x for x in lines if x.startswith("E ")]
    return (errors[-1][1:].strip() if errors else lines[-1] if lines else "")[:200]


def run_tests(loaded: LoadedFile, nodes: list[str], root: Path, *, driver_context, target_key: str,
              wanted: tuple, index: int = 0) -> Ran:
    """Run the tests `nodes` (node ids or test files, relative to the project's folder `root`) until the
    kernel `wanted` (file_launches.kernel_key) has launched `index`+1 times. Each launch's `where`
    names the test that made it."""
    from kinspect.compile import light

    nodes = list(dict.fromkeys(nodes))
    key = (str(loaded.where.file), target_key, tuple(nodes), wanted, index, id(loaded))
    if key in _RUNS:
        return _RUNS[key]
    if _ACTIVE:        # a test that runs kinspect (its own tests): not run again inside
        return Ran((), "a test run is under way already", False)
    import pytest

    if not hasattr(_Plugin.pytest_fixture_setup, "pytest_impl"):
        pytest.hookimpl(wrapper=True)(_Plugin.pytest_fixture_setup)
    recorder = FileLaunchRecorder(str(loaded.where.file), str(loaded.where.root), where="the tests")
    recorder.wanted, recorder.index = wanted, index
    plugin = _Plugin(recorder, time.monotonic() + TEST_BUDGET_S)
    paths = {n: _path(n, root) for n in nodes}    # from the current folder, before the run moves it
    options = [f"--rootdir={root}", "-q", "-s", "--tb=line", "--assert=plain", "-p", "no:cacheprovider",
               "-p", "no:faulthandler", "-o", "addopts=", "--continue-on-collection-errors", "--no-header",
               "-W", "ignore"]
    # the tests, then the benchmarks and examples, each a pytest run of its own: pytest imports every
    # file it is given before it runs a test, and a benchmark's module-level code launches (its
    # perf_report run at import) before the tests ran
    phases = [{n: p for n, p in paths.items() if is_example_file(Path(n.partition("::")[0])) == example}
              for example in (False, True)]
    stopped = ""
    _ACTIVE.append(key)
    with guarded(loaded.where, driver_context, recorder), _isolated(root):
        try:
            with budget(TEST_BUDGET_S):
                light.run_skipped(loaded.where.module.split(".")[0])
                for phase in phases:
                    if not phase or recorder.stopped:
                        continue
                    why = _pytest(list(phase.values()) + options, plugin)
                    if why is not None:
                        # a conftest.py that fails to import (Megatron-LM's imports typing.override, of
                        # Python 3.12): pytest says so and runs nothing; run again without them, the
                        # tests that need no fixture of theirs may launch it
                        plugin.conftest = why
                        if _pytest(list(phase.values()) + options + ["--noconftest"], plugin) is not None:
                            plugin.errors.append(f"pytest could not start: {plugin.conftest}")
                    if not recorder.stopped:
                        _main_blocks(phase, recorder, plugin)
        except Enough:
            pass
        except (Exception, SystemExit, TimeUp, light.InitNeeded) as e:
            stopped = f"{type(e).__name__}: {_last_line(str(e))}"
        finally:
            _ACTIVE.pop()
    if not recorder.of(wanted):
        stopped = stopped or (f"they launched other kernels {MAX_RECORDED} times first" if recorder.stopped else
                              f"they ran past {TEST_BUDGET_S} s" if time.monotonic() > plugin.deadline else
                              plugin.errors[0] if plugin.errors else
                              f"{plugin.collected} test{'s' if plugin.collected != 1 else ''} ran without launching it")
        if plugin.conftest and plugin.conftest not in stopped:
            stopped += f" (run without the project's conftest.py files, which pytest could not import: {plugin.conftest})"
    elif plugin.conftest:
        stopped = f"run without the project's conftest.py files, which pytest could not import ({plugin.conftest})"
    elif plugin.passed_over:
        # the launch is the test's, with what failed before it said
        shown = [f"{k} ({v})" for k, v in plugin.passed_over.items()]
        stopped = (f"{len(shown)} autouse fixture{'s' if len(shown) != 1 else ''} of its failed and "
                   f"{'were' if len(shown) != 1 else 'was'} passed over: {', '.join(shown[:3])}"
                   f"{', ...' if len(shown) > 3 else ''}")
    _RUNS[key] = Ran(tuple(recorder.launches), stopped, recorder.stopped)
    return _RUNS[key]


def _pytest(args: list, plugin: _Plugin) -> str | None:
    """Run pytest on `args`, its output kept from the terminal; where it could not start (a conftest.py
    that fails to import: it runs nothing) and has no launch of the kernel, its last line, else None."""
    import pytest

    said = io.StringIO()
    with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said):
        code = pytest.main(args, plugins=[plugin])
    if code in (pytest.ExitCode.INTERNAL_ERROR, pytest.ExitCode.USAGE_ERROR) and not plugin.recorder.stopped:
        return _last_line(said.getvalue())
    return None


def _main_blocks(paths: dict, recorder: FileLaunchRecorder, plugin: _Plugin) -> None:
    """Run the `__main__` block of each test file of `paths` (node -> its path, as pytest was given it)
    that has one, as `python FILE` would (its folder first on sys.path): a test written as a script
    (`def main(): ...` and no test function)."""
    import runpy

    for node, given in paths.items():
        if "::" in node:
            continue
        path = Path(given)
        if main_block(path) is None:
            continue
        recorder.where = f"the test {node}"
        sys.path.insert(0, str(path.parent))
        sys.argv = [str(path)]
        try:
            runpy.run_path(str(path), run_name="__main__")
        except (Exception, SystemExit) as e:
            plugin.errors.append(f"{node}'s __main__ block failed: {type(e).__name__}: {_last_line(str(e))}")
        if recorder.stopped:
            return


def _path(node: str, root: Path) -> str:
    """A node as pytest is given it: its file made absolute, from the current folder where it is
    there (as the user types it), else from the project's folder (as pytest names it)."""
    file, sep, rest = node.partition("::")
    path = Path(file)
    if not path.is_absolute():
        path = path.resolve() if path.is_file() else root / path
    return f"{path}{sep}{rest}"


@contextlib.contextmanager
def _isolated(root: Path):
    """pytest as the project's own run has it, less what the environment adds (its plugins, its
    PYTEST_ADDOPTS) (no extension is built and torch.compile leaves code as it is: loader.guarded);
    after, the current folder, the environment, torch's default dtype and device, sys.path and the
    modules of the project's tests as they were."""
    # and nothing downloaded: a conftest's session fixtures fetch models (axolotl's), which the
    # launch does not need; with these the Hugging Face libraries fail at once
    env = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTEST_ADDOPTS": "", "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    saved_env = dict(os.environ)           # a test module's own settings (CUDA_VISIBLE_DEVICES) too
    saved_path, before = list(sys.path), set(sys.modules)
    cwd = os.getcwd()
    torch = sys.modules.get("torch")
    # what a test may set for the whole process (`torch.set_default_dtype(torch.float64)`)
    defaults = (torch.get_default_dtype(), getattr(torch, "get_default_device", lambda: None)()) if torch else None
    os.environ.update(env)
    top = str(root.resolve()) + os.sep
    try:
        os.chdir(root)         # where the project runs its tests from (their relative paths)
        yield
    finally:
        os.chdir(cwd)
        if defaults is not None:
            torch.set_default_dtype(defaults[0])
            if defaults[1] is not None and _default_device(torch) != defaults[1]:
                torch.set_default_device(None if defaults[1].type == "cpu" else defaults[1])
        if dict(os.environ) != saved_env:
            os.environ.clear()
            os.environ.update(saved_env)
        sys.path[:] = saved_path
        for name in set(sys.modules) - before:
            file = getattr(sys.modules.get(name), "__file__", None) or ""
            if name == "conftest" or name.endswith(".conftest") or os.path.realpath(file).startswith(top) and \
                    _is_test_module(Path(file)):
                sys.modules.pop(name, None)


def _default_device(torch):
    """torch's default device, or None where asking fails (a default device torch cannot make a
    tensor on, set by a test)."""
    try:
        return torch.get_default_device()
    except Exception:
        return None


def _is_test_module(path: Path) -> bool:
    return is_test_file(path) or path.name == "conftest.py"
