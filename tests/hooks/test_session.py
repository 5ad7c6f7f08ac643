"""hooks.session: the one installer kinspect.capture(), every process of `kinspect capture` and the
interpreter path use. What it installs comes off again, also when an install fails half-way."""

import subprocess
import sys
import textwrap

import pytest

from kinspect.files.store import Store
from kinspect.hooks import session as sessions
from kinspect.hooks.autotune import AutotuneRecorder


class FakeInterpreted:
    """Stands in for program.interpreted_launches.InterpretRecorder (the compile layer makes the real one)."""

    def __init__(self):
        self.installed = self.restored = 0

    def install(self):
        self.installed += 1

    def restore(self):
        self.restored += 1


def test_an_interpreted_session_is_undone_when_the_autotuner_hook_fails(tmp_path, monkeypatch):
    from triton.runtime.autotuner import Autotuner

    run = Autotuner.__dict__["run"]

    def broken(self):
        raise RuntimeError("cannot install")

    monkeypatch.setattr(AutotuneRecorder, "install", broken)
    fake = FakeInterpreted()
    with pytest.raises(RuntimeError, match="cannot install"):
        sessions.install(Store(tmp_path), interpreted=fake)
    assert (fake.installed, fake.restored) == (1, 1)
    assert Autotuner.__dict__["run"] is run


def test_an_interpreted_session_installs_the_autotuner_in_its_interpreted_form(tmp_path):
    from triton.runtime.autotuner import Autotuner

    run, bench = Autotuner.__dict__["run"], Autotuner.__dict__["_bench"]
    fake = FakeInterpreted()
    s = sessions.install(Store(tmp_path), interpreted=fake, origin="capture --interpret")
    try:
        assert Autotuner.__dict__["run"] is not run and Autotuner.__dict__["_bench"] is not bench
        assert s.recorder.autotune is s.autotune.decisions and s.recorder.origin == "capture --interpret"
    finally:
        s.close()
    assert Autotuner.__dict__["run"] is run and Autotuner.__dict__["_bench"] is bench and fake.restored == 1


def test_a_block_session_gives_the_listener_back(tmp_path):
    from triton import knobs

    def theirs(**kwargs):
        pass

    knobs.compilation.listener = theirs
    try:
        with sessions.recording(tmp_path / "out") as rec:
            assert knobs.compilation.listener is rec and rec.previous is theirs
        assert knobs.compilation.listener is theirs
    finally:
        knobs.compilation.listener = None


def test_a_process_session_keeps_its_listener_slot_and_chains_a_later_one(tmp_path):
    """What the sitecustomize of `kinspect capture` installs: a tool setting the listener afterwards
    (tritonparse, proton) is called after kinspect's, not instead of it. In a child: it is for good."""
    script = textwrap.dedent(f"""
        from triton import knobs
        from kinspect.files.store import Store
        from kinspect.hooks.launch_counts import LaunchRecorder
        from kinspect.hooks.session import install

        store = Store({str(tmp_path / "out")!r})
        s = install(store, launches=LaunchRecorder(store), for_process=True)
        def later(**kwargs):
            pass
        knobs.compilation.listener = later
        assert knobs.compilation.listener is s.recorder and s.recorder.previous is later
        knobs.compilation.listener = None
        assert knobs.compilation.listener is s.recorder and s.recorder.previous is None
        s.at_exit()                                        # no launches: no summary written
        assert not (store.root / ".kinspect-capture").exists()
        print("ok")
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr
