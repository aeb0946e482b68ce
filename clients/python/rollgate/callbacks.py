"""Receives batch callbacks: Rollgate POSTs the final batch view to ``callback_url`` when a batch ends."""
from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .errors import WaitTimeoutError
from .types import Batch

MAX_BODY = 64 * 1024 * 1024


class CallbackServer:
    """A small HTTP server on loopback that collects batch callbacks.

    ``with CallbackServer() as cb: client.submit(…, callback_url=cb.url); batch = cb.wait(batch_id)``.
    ``on_batch`` (optional) is called on the server's thread for each callback as it arrives.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0, on_batch: Callable[[Batch], None] | None = None):
        self._arrived: dict[str, Batch] = {}
        self._cond = threading.Condition()
        self.received: "queue.Queue[Batch]" = queue.Queue()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("content-length") or 0)
                if length <= 0 or length > MAX_BODY:
                    self.send_error(400, "a JSON batch view is expected")
                    return
                try:
                    data: Any = json.loads(self.rfile.read(length))
                    batch = Batch.from_json(data)
                except (ValueError, KeyError, TypeError) as e:
                    self.send_error(400, f"not a batch view: {e}")
                    return
                self.send_response(204)
                self.end_headers()
                with outer._cond:
                    outer._arrived[batch.id] = batch
                    outer._cond.notify_all()
                outer.received.put(batch)
                if on_batch is not None:
                    on_batch(batch)

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

        self._server = ThreadingHTTPServer((host, port), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, name="rollgate-callbacks", daemon=True)
        self._thread.start()
        h, p = self._server.server_address[:2]
        self.url = f"http://{h}:{p}/rollgate-callback"

    def wait(self, batch_id: str, timeout: float | None = None) -> Batch:
        """The batch view Rollgate posted for ``batch_id`` (waits for it to arrive)."""
        with self._cond:
            if not self._cond.wait_for(lambda: batch_id in self._arrived, timeout=timeout):
                raise WaitTimeoutError(f"no callback for batch {batch_id} within {timeout} s")
            return self._arrived[batch_id]

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> "CallbackServer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
