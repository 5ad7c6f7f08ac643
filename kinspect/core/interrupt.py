"""Ctrl-C during kinspect's own long steps: what is done stays done, the rest can be finished later.

A step that stops early raises `Interrupted` (a KeyboardInterrupt) carrying what it finished, after
stopping what it started (worker processes). `deferred()` holds SIGINT back over a few lines that
must not stop halfway (rewriting a record, then removing the files merged into it). `exit_code`
gives a child's return code as a shell does (128 + signal).
"""

from __future__ import annotations

import contextlib
import signal
import threading


class Interrupted(KeyboardInterrupt):
    """Ctrl-C stopped a step; `done` is what it finished before (the step says what that is)."""

    def __init__(self, done=None):
        super().__init__()
        self.done = done


@contextlib.contextmanager
def deferred(reraise: bool = True):
    """Hold SIGINT back for the block; the list it yields gets an entry per SIGINT that came. With
    `reraise`, a SIGINT that came is raised as KeyboardInterrupt once the block is done. Outside
    the main thread (where no signal handler runs) it changes nothing."""
    got: list = []
    if threading.current_thread() is not threading.main_thread():
        yield got
        return
    previous = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, lambda signum, frame: got.append(signum))
    try:
        yield got
    finally:
        signal.signal(signal.SIGINT, previous if previous is not None else signal.default_int_handler)
    if got and reraise:
        raise KeyboardInterrupt


def exit_code(returncode: int) -> int:
    """A child's return code as a shell gives it: a child killed by signal N (Popen's -N) is 128 + N."""
    return 128 - returncode if returncode < 0 else returncode
