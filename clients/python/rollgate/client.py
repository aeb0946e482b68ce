"""The control-API client (DESIGN §11): sessions, batches, weight-sync control, traces and export."""
from __future__ import annotations

import contextlib
import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

from .errors import (
    BatchFailedError,
    RollgateConnectionError,
    RollgateError,
    WaitTimeoutError,
    error_for_status,
    server_message,
)
from .types import (
    Batch,
    Completion,
    Engine,
    Health,
    Session,
    SessionSummary,
    SessionUrls,
    Trace,
    TraceRow,
    from_json,
)

DEFAULT_URL = "http://127.0.0.1:8321"
PAUSE_MODES = ("queue", "reject", "abort")


def _query(params: dict[str, Any]) -> str:
    pairs = {k: v for k, v in params.items() if v is not None}
    return f"?{urllib.parse.urlencode(pairs)}" if pairs else ""


class Client:
    """A Rollgate server. ``token`` is the control token (needed when Rollgate is bound off loopback);
    ``token_file`` reads it from the server's ``<data-dir>/control-token`` (mode 0600) instead."""

    def __init__(self, url: str = DEFAULT_URL, *, token: str | None = None, token_file: str | None = None,
                 timeout: float = 60.0):
        self.url = url.rstrip("/")
        if token is None and token_file:
            with open(token_file, encoding="utf-8") as f:
                token = f.read().strip()
        self.token = token
        self.timeout = timeout

    # --- HTTP -------------------------------------------------------------------------------------
    def _open(self, method: str, path: str, body: Any = None, timeout: float | None = None):
        url = f"{self.url}{path}"
        data = None if body is None else json.dumps(body).encode("utf-8")
        headers = {"accept": "application/json"}
        if data is not None:
            headers["content-type"] = "application/json"
        if self.token:
            headers["authorization"] = f"Bearer {self.token}"
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            return urllib.request.urlopen(req, timeout=timeout or self.timeout)
        except urllib.error.HTTPError as e:
            raw = e.read().decode("utf-8", "replace")
            try:
                parsed: Any = json.loads(raw)
            except ValueError:
                parsed = raw
            message, type_ = server_message(parsed, f"HTTP {e.code} {e.reason}")
            retry_after = e.headers.get("retry-after") if e.headers else None
            raise error_for_status(e.code, message, type_, parsed, url, float(retry_after) if retry_after else None) from None
        except (urllib.error.URLError, ConnectionError, TimeoutError) as e:
            reason = getattr(e, "reason", e)
            raise RollgateConnectionError(f"could not reach Rollgate at {self.url}: {reason}", url=url) from None

    def request(self, method: str, path: str, body: Any = None, timeout: float | None = None) -> Any:
        """Any control-API call; answers the decoded JSON. Errors raise ``RollgateError`` subclasses."""
        with self._open(method, path, body, timeout) as res:
            text = res.read().decode("utf-8")
        return json.loads(text) if text else None

    # --- server -----------------------------------------------------------------------------------
    def health(self) -> Health:
        return from_json(Health, self.request("GET", "/api/health"))

    def engines(self) -> list[Engine]:
        return [from_json(Engine, e) for e in self.request("GET", "/api/engines")["engines"]]

    # --- sessions ---------------------------------------------------------------------------------
    def create_session(self, *, engine: str | None = None, harness: str | None = None, task_id: str | None = None,
                       metadata: dict[str, Any] | None = None) -> Session:
        body = {k: v for k, v in {"engine": engine, "harness": harness, "taskId": task_id, "metadata": metadata}.items() if v is not None}
        data = self.request("POST", "/api/sessions", body)
        return from_json(Session, data, urls=SessionUrls(**data["urls"]))

    def session(self, session_id: str) -> SessionSummary:
        return from_json(SessionSummary, self.request("GET", f"/api/sessions/{urllib.parse.quote(session_id)}"))

    def sessions(self, *, batch: str | None = None, limit: int = 200, offset: int = 0) -> list[SessionSummary]:
        data = self.request("GET", f"/api/sessions{_query({'batch': batch, 'limit': limit, 'offset': offset})}")
        return [from_json(SessionSummary, s) for s in data["sessions"]]

    def completions(self, session_id: str) -> list[Completion]:
        data = self.request("GET", f"/api/sessions/{urllib.parse.quote(session_id)}/completions")
        return [from_json(Completion, c) for c in data["completions"]]

    def traces(self, session_id: str, *, builder: str = "prefix-merge") -> list[Trace]:
        data = self.request("GET", f"/api/sessions/{urllib.parse.quote(session_id)}/traces{_query({'builder': builder})}")
        return [from_json(Trace, t) for t in data["traces"]]

    def finish_session(self, session_id: str, *, reward: float | None = None,
                       trace_rewards: dict[str, float | None] | None = None) -> SessionSummary:
        """Ends a session with its reward; ``trace_rewards`` keys are trace ids, completion ids or response ids."""
        body: dict[str, Any] = {}
        if reward is not None:
            body["reward"] = reward
        if trace_rewards is not None:
            body["traceRewards"] = trace_rewards
        return from_json(SessionSummary, self.request("POST", f"/api/sessions/{urllib.parse.quote(session_id)}/finish", body))

    # --- batches ----------------------------------------------------------------------------------
    def submit(self, *, harness: str, dataset: str | None = None, tasks: list[dict[str, Any]] | None = None,
               engine: str | None = None, n: int = 1, concurrency: int = 4, callback_url: str | None = None,
               **options: Any) -> str:
        """Submits a batch (tasks × harness × engine × n samples); answers its id. ``options``: timeoutMs,
        evaluator, command, maxTurns, extraArgs, name, metadata, runtime… as the server's batch spec names them."""
        if (dataset is None) == (tasks is None):
            raise ValueError("give exactly one of dataset (a JSONL path or demo:NAME) and tasks (a list of task dicts)")
        spec: dict[str, Any] = {"harness": harness, "n": n, "concurrency": concurrency, **options}
        if dataset is not None:
            spec["dataset"] = dataset
        if tasks is not None:
            spec["tasks"] = tasks
        if engine is not None:
            spec["engine"] = engine
        if callback_url is not None:
            spec["callbackUrl"] = callback_url
        return self.request("POST", "/api/batches", spec)["id"]

    def batch(self, batch_id: str) -> Batch:
        return Batch.from_json(self.request("GET", f"/api/batches/{urllib.parse.quote(batch_id)}"))

    def cancel(self, batch_id: str) -> Batch:
        return Batch.from_json(self.request("POST", f"/api/batches/{urllib.parse.quote(batch_id)}/cancel", {}))

    def wait(self, batch_id: str, *, progress: Callable[[Batch], None] | None = None, poll_interval: float = 1.0,
             timeout: float | None = None, raise_on_failure: bool = False) -> Batch:
        """Polls until the batch ends. ``progress`` gets the batch view whenever its counts change (and once
        at the start and at the end). Answers the final view."""
        deadline = None if timeout is None else time.monotonic() + timeout
        last: tuple[Any, ...] | None = None
        while True:
            view = self.batch(batch_id)
            key = (view.status, view.counts.done, view.counts.running, view.counts.queued)
            if progress is not None and key != last:
                progress(view)
                last = key
            if view.done:
                if raise_on_failure and view.status != "completed":
                    raise BatchFailedError(f"batch {batch_id} ended {view.status}: {view.error or 'see its samples'}", body=view.raw)
                return view
            if deadline is not None and time.monotonic() >= deadline:
                raise WaitTimeoutError(f"batch {batch_id} still {view.status} after {timeout} s ({view.counts.done}/{view.counts.total} samples done)", body=view.raw)
            time.sleep(poll_interval if deadline is None else max(0.0, min(poll_interval, deadline - time.monotonic())))

    # --- weight sync ------------------------------------------------------------------------------
    def pause(self, mode: str = "queue", *, timeout_ms: int = 30_000, forward: bool = False) -> dict[str, Any]:
        """Stops new engine calls: ``queue`` holds them, ``reject`` answers 429 + Retry-After, ``abort`` also
        aborts calls in flight. Waits (up to ``timeout_ms``) for in-flight calls to drain."""
        if mode not in PAUSE_MODES:
            raise ValueError(f"mode must be one of {', '.join(PAUSE_MODES)}, not {mode!r}")
        return self.request("POST", "/api/engines/pause", {"mode": mode, "timeoutMs": timeout_ms, "forward": forward},
                            timeout=max(self.timeout, timeout_ms / 1000 + 10))

    def resume(self, *, forward: bool = False) -> dict[str, Any]:
        return self.request("POST", "/api/engines/resume", {"forward": forward})

    @contextlib.contextmanager
    def paused(self, mode: str = "queue", *, timeout_ms: int = 30_000, forward: bool = False) -> Iterator[dict[str, Any]]:
        """``with client.paused():`` around a weight update: engines paused inside, resumed on the way out,
        also when the block raises."""
        result = self.pause(mode, timeout_ms=timeout_ms, forward=forward)
        try:
            yield result
        finally:
            self.resume(forward=forward)

    def set_policy_version(self, version: int) -> int:
        """Stamps ``version`` on every completion from now on (durable across restarts)."""
        return self.request("POST", "/api/policy-version", {"version": version})["policyVersion"]

    # --- training data ----------------------------------------------------------------------------
    def _export_lines(self, fmt: str, *, batch: str | None, session: str | None, engine: str | None, builder: str,
                      min_reward: float | None, max_reward: float | None, messages: bool, timeout: float | None) -> Iterator[dict[str, Any]]:
        query = _query({"batch": batch, "session": session, "engine": engine, "builder": builder, "format": fmt,
                        "minReward": min_reward, "maxReward": max_reward, "messages": "1" if messages else None})
        with self._open("GET", f"/api/export{query}", timeout=timeout) as res:
            for line in res:
                if line.strip():
                    yield json.loads(line)

    def iter_traces(self, *, batch: str | None = None, session: str | None = None, engine: str | None = None,
                    builder: str = "prefix-merge", min_reward: float | None = None, max_reward: float | None = None,
                    messages: bool = False, timeout: float | None = None) -> Iterator[TraceRow]:
        """Streams training export rows one at a time (constant memory on both sides)."""
        for row in self._export_lines("train", batch=batch, session=session, engine=engine, builder=builder,
                                      min_reward=min_reward, max_reward=max_reward, messages=messages, timeout=timeout):
            yield from_json(TraceRow, row)

    def iter_sft(self, *, batch: str | None = None, session: str | None = None, engine: str | None = None,
                 builder: str = "prefix-merge", min_reward: float | None = None, max_reward: float | None = None,
                 timeout: float | None = None) -> Iterator[dict[str, Any]]:
        """Streams the SFT (messages) export rows as dicts."""
        yield from self._export_lines("sft", batch=batch, session=session, engine=engine, builder=builder,
                                      min_reward=min_reward, max_reward=max_reward, messages=False, timeout=timeout)

    def rescore(self, *, engine: str, batch: str | None = None, session: str | None = None, builder: str = "prefix-merge",
                concurrency: int = 4, include_logprobs: bool = False, timeout_ms: int | None = None) -> dict[str, Any]:
        """Re-scores a batch's (or a session's) traces under ``engine``: per-token Δlogprob, mean |Δ|, KL estimate."""
        if (batch is None) == (session is None):
            raise ValueError("give exactly one of batch and session")
        body: dict[str, Any] = {"engine": engine, "builder": builder, "concurrency": concurrency, "includeLogprobs": include_logprobs}
        if batch is not None:
            body["batchId"] = batch
        if session is not None:
            body["sessionId"] = session
        if timeout_ms is not None:
            body["timeoutMs"] = timeout_ms
        return self.request("POST", "/api/traces/rescore", body, timeout=max(self.timeout, (timeout_ms or 600_000) / 1000 + 10))


__all__ = ["Client", "DEFAULT_URL", "RollgateError"]
