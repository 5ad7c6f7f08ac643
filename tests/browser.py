"""Headless Chromium driven over the DevTools protocol on a pipe (--remote-debugging-pipe): no
websocket library and no browser download, only Debian's `chromium` package.

    with Browser.start() as b:
        page = b.open("file:///tmp/r.html")
        page.wait_for("document.body.dataset.ready === '1'")
        page.evaluate("document.title")
        page.errors, page.requests      # console errors, exceptions, log errors; URLs requested
        page.screenshot(path)
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

NAMES = ("chromium", "chromium-browser", "google-chrome", "chrome")


def find() -> str | None:
    for name in NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


class Browser:
    def __init__(self, proc: subprocess.Popen, to_browser: int, from_browser: int, profile: str):
        self.proc, self.to_browser, self.from_browser, self.profile = proc, to_browser, from_browser, profile
        self.buffer = b""
        self.next_id = 0
        self.events: list[dict] = []

    @classmethod
    def start(cls, width: int = 1400, height: int = 1800) -> "Browser":
        exe = find()
        if exe is None:
            raise FileNotFoundError("no chromium on PATH")
        profile = tempfile.mkdtemp(prefix="kinspect-chromium-")
        # fd 3: the browser reads commands; fd 4: it writes replies and events. Moved high first so
        # the dup2 onto 3 and 4 in the child cannot clobber one of them.
        cmd_r, cmd_w = os.pipe()
        out_r, out_w = os.pipe()
        child_r, child_w = _high(cmd_r), _high(out_w)

        def fds():
            os.dup2(child_r, 3)
            os.dup2(child_w, 4)

        args = [exe, "--headless", "--remote-debugging-pipe", "--disable-gpu", "--no-first-run",
                "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--mute-audio", "--hide-scrollbars",
                f"--window-size={width},{height}", f"--user-data-dir={profile}", "about:blank"]
        if os.geteuid() == 0:
            args.insert(1, "--no-sandbox")  # Chromium refuses to run as root with its sandbox
        proc = subprocess.Popen(args, preexec_fn=fds, close_fds=False, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for fd in (cmd_r, out_w, child_r, child_w):
            os.close(fd)
        return cls(proc, cmd_w, out_r, profile)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self.to_browser, self.from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)

    # -- the protocol: JSON messages separated by NUL bytes ---------------------------------------

    def send(self, method: str, params: dict | None = None, session: str | None = None, timeout: float = 30):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.to_browser, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def _read(self, deadline: float) -> dict:
        import select

        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.from_browser], [], [], left)[0]:
                raise TimeoutError("chromium did not answer")
            chunk = os.read(self.from_browser, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the pipe")
            self.buffer += chunk
        raw, _, self.buffer = self.buffer.partition(b"\0")
        return json.loads(raw)

    def open(self, url: str) -> "Page":
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, session)
        for domain in ("Runtime", "Log", "Network", "Page"):
            self.send(f"{domain}.enable", session=session)
        self.send("Page.navigate", {"url": url}, session=session)
        page.wait_for("document.readyState === 'complete'")
        return page


class Page:
    def __init__(self, browser: Browser, session: str):
        self.browser, self.session = browser, session

    def evaluate(self, expression: str):
        r = self.browser.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                   "awaitPromise": True}, session=self.session)
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expression}: {r['exceptionDetails'].get('exception', {}).get('description')}")
        return r["result"].get("value")

    def wait_for(self, condition: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while not self.evaluate(f"Boolean({condition})"):
            if time.monotonic() > deadline:
                raise TimeoutError(f"waited {timeout} s for {condition}")
            time.sleep(0.05)

    def _mine(self) -> list[dict]:
        return [e for e in self.browser.events if e.get("sessionId") == self.session]

    @property
    def errors(self) -> list[str]:
        """Console errors, uncaught exceptions and browser log errors (CSP violations land there)."""
        out = []
        for e in self._mine():
            p = e.get("params", {})
            if e.get("method") == "Runtime.exceptionThrown":
                out.append(p["exceptionDetails"].get("exception", {}).get("description") or p["exceptionDetails"]["text"])
            elif e.get("method") == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert", "warning"):
                out.append(" ".join(str(a.get("value", a.get("description"))) for a in p.get("args", [])))
            elif e.get("method") == "Log.entryAdded" and p["entry"].get("level") in ("error", "warning"):
                out.append(p["entry"].get("text", ""))
        return out

    @property
    def requests(self) -> list[str]:
        return [e["params"]["request"]["url"] for e in self._mine() if e.get("method") == "Network.requestWillBeSent"]

    def screenshot(self, path: Path) -> Path:
        data = self.browser.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": False},
                                 session=self.session)["data"]
        Path(path).write_bytes(base64.b64decode(data))
        return Path(path)


def _high(fd: int) -> int:
    import fcntl

    return fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
