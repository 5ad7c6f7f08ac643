"""Progress lines on stderr for the commands that compile or time many variants."""

from __future__ import annotations

import sys

import click



class Steps:
    """Lines on stderr as a long command enters steps that have no count to show as a bar: each
    step's line is shown once the command has run PROGRESS_AFTER_S seconds, so a quick command (or
    one that stops at a one-line error) prints nothing but its answer."""

    def __init__(self):
        import threading
        import time

        self.started = time.monotonic()
        self.current = None
        self.lock = threading.Lock()
        self.timer = threading.Timer(PROGRESS_AFTER_S, self._due)
        self.timer.daemon = True
        self.timer.start()

    def __call__(self, text: str) -> None:
        import time

        with self.lock:
            self.current = text
            if time.monotonic() - self.started >= PROGRESS_AFTER_S:
                self._say()

    def _due(self):
        with self.lock:
            if self.current:
                self._say()

    def _say(self):
        click.echo(f"kinspect: {self.current}", err=True)
        self.current = None

    def close(self):
        self.timer.cancel()

    @staticmethod
    def silent():
        """Steps that say nothing (where only the answer should reach stderr)."""
        class Silent:
            def __call__(self, text: str) -> None:
                pass

            def close(self) -> None:
                pass

        return Silent()


# Progress is shown for steps that take longer than this; on a terminal as a bar, elsewhere as lines.
PROGRESS_AFTER_S = 2.0


class ProgressBar:
    """Progress of a long step on stderr: a bar on a terminal; elsewhere (a log, CI, a pipe) plain
    lines, the first once the step has run PROGRESS_AFTER_S seconds, then at most one every
    PROGRESS_AFTER_S seconds, and the last."""

    def __init__(self, label: str = "compiling"):
        self.label = label

    def __enter__(self):
        import time

        self.bar = None
        self.done = 0
        self.reused = 0
        self.total = None
        self.said = time.monotonic()
        self.spoke = False
        return self.update

    def update(self, outcome, total=None):
        if sys.stderr.isatty():
            if self.bar is None and total:
                self.bar = click.progressbar(length=total, label=self.label, file=sys.stderr)
                self.bar.__enter__()
            if self.bar is not None and outcome is not None:
                self.bar.update(1)
            return
        import time

        if outcome is not None:
            self.done += 1
            self.reused += bool(getattr(outcome, "reused", False))
        self.total = total or self.total
        now = time.monotonic()
        last = self.total is not None and self.done >= self.total
        if now - self.said >= PROGRESS_AFTER_S or (last and self.spoke):
            self.said, self.spoke = now, True
            of = f"/{self.total}" if self.total else ""
            reused = f" ({self.reused} of them reused from the store, not compiled)" if self.reused else ""
            click.echo(f"kinspect: {self.label} {self.done}{of}{reused}", err=True)

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.__exit__(*exc)


def progress_line(line: str) -> None:
    click.echo(line, err=True)
