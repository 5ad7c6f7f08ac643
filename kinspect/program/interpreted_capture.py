"""kinspect.capture() in a program run under TRITON_INTERPRET, where nothing compiles: the
interpreted launches are recorded (kinspect.program.interpreted_launches, installed by the capture session,
kinspect.hooks.session) and compiled for a target when the block ends (kinspect.program.pending), as
`kinspect capture --interpret` does for a whole program."""

from __future__ import annotations

import contextlib
from pathlib import Path

from kinspect.files.store import Store


def interpreting() -> bool:
    try:
        from triton import knobs

        return bool(knobs.runtime.interpret)
    except (ImportError, AttributeError):
        return False


@contextlib.contextmanager
def record_interpreted(out_dir: str | Path, target: str | None = None):
    """kinspect.capture() under TRITON_INTERPRET: the interpreted launches and autotuning decisions inside
    the block are recorded (kinspect.program.interpreted_launches), then compiled for `target` in worker processes
    when it ends; `rec.variants` holds them."""
    import os

    from kinspect.compile.targets import DEFAULT_OFFLINE, resolve
    from kinspect.files.store import merge_autotune, merge_launches, read_record
    from kinspect.hooks.session import install
    from kinspect.program.interpreted_launches import InterpretRecorder
    from kinspect.program.pending import compile_pending

    target = str(resolve(target or DEFAULT_OFFLINE).target)
    store = Store(out_dir)
    with store.lock(required=False):
        interp = InterpretRecorder(store.root, target)
        session = install(store, interpreted=interp, origin="capture --interpret")
        recorder = session.recorder
        try:
            yield recorder
        finally:
            session.close()
            interp.write()
            compiled = compile_pending(store.root)
            for v in compiled.variants:
                merge_launches(Path(v.path))
            recorder.variants += [read_record(Path(v.path)) for v in compiled.variants]
            recorder.errors += [f"'{k}' was not compiled for {target}: {e}" for k, e in compiled.failed]
            if session.autotune.decisions:
                merge_autotune(store.root, only_pid=os.getpid())
