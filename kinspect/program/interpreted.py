"""kinspect.capture() in a program run under TRITON_INTERPRET, where nothing compiles: the
interpreted launches are recorded (kinspect.program.interpret) and compiled for a target when the
block ends (kinspect.program.pending), as `kinspect capture --interpret` does for a whole program."""

from __future__ import annotations

import contextlib
from pathlib import Path

from kinspect.hooks import Recorder
from kinspect.files.store import Store


def interpreting() -> bool:
    try:
        from triton import knobs

        return bool(knobs.runtime.interpret)
    except (ImportError, AttributeError):
        return False


@contextlib.contextmanager
def capture(out_dir: str | Path, target: str | None = None):
    """capture() under TRITON_INTERPRET: the interpreted launches and autotuning decisions inside the
    block are recorded (kinspect.program.interpret), then compiled for `target` in worker processes
    when it ends; `rec.variants` holds them."""
    import os

    from kinspect.compile.targets import DEFAULT_OFFLINE, resolve
    from kinspect.hooks.autotune import AutotuneRecorder
    from kinspect.program.interpret import InterpretRecorder
    from kinspect.program.pending import compile_pending
    from kinspect.files.store import merge_autotune, merge_launches

    target = str(resolve(target or DEFAULT_OFFLINE).target)
    store = Store(out_dir)
    recorder = Recorder(store, origin="capture --interpret")
    interp = InterpretRecorder(store.root, target)
    autotune = AutotuneRecorder(store.root, interpret=True)
    recorder.autotune = autotune.decisions
    with store.lock(required=False):
        interp.install()
        autotune.install()
        try:
            yield recorder
        finally:
            interp.restore()
            autotune.restore()
            interp.write()
            compiled = compile_pending(store.root)
            for v in compiled.variants:
                merge_launches(Path(v.path))
            from kinspect.files.store import read_record

            recorder.variants += [read_record(Path(v.path)) for v in compiled.variants]
            recorder.errors += [f"'{k}' was not compiled for {target}: {e}" for k, e in compiled.failed]
            if autotune.decisions:
                merge_autotune(store.root, only_pid=os.getpid())
