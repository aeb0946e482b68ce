"""Exceptions raised by the client. Each carries the server's own message, the HTTP status and the body."""
from __future__ import annotations

from typing import Any


class RollgateError(Exception):
    """A call to Rollgate failed. ``message`` is what the server said (or why no answer came)."""

    def __init__(self, message: str, status: int | None = None, type: str | None = None, body: Any = None, url: str | None = None):
        self.message = message
        self.status = status
        self.type = type
        self.body = body
        self.url = url
        where = f" ({status} from {url})" if status is not None and url else ""
        super().__init__(f"{message}{where}")


class RollgateConnectionError(RollgateError):
    """Rollgate could not be reached (not running, wrong URL, connection dropped)."""


class BadRequestError(RollgateError):
    """400/422: the request was refused as invalid; ``message`` names the field and the problem."""


class AuthenticationError(RollgateError):
    """401/403: a control token is needed or wrong, or the call was refused (cross-site, wrong host)."""


class NotFoundError(RollgateError):
    """404: no such session, batch, rollout or route."""


class ConflictError(RollgateError):
    """409: the thing exists already or is in a state that forbids the call (e.g. cancelling a finished batch)."""


class RateLimitError(RollgateError):
    """429: engines paused in reject mode, or too many calls in flight. ``retry_after`` is in seconds."""

    def __init__(self, *args: Any, retry_after: float | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.retry_after = retry_after


class ServerError(RollgateError):
    """5xx: Rollgate or an engine failed."""


class BatchFailedError(RollgateError):
    """``wait(…, raise_on_failure=True)``: the batch ended but did not complete."""


class WaitTimeoutError(RollgateError):
    """``wait(…, timeout=…)``: the batch was still running when the time was up."""


def error_for_status(status: int, message: str, type: str | None, body: Any, url: str, retry_after: float | None = None) -> RollgateError:
    if status == 429:
        return RateLimitError(message, status, type, body, url, retry_after=retry_after)
    cls: type[RollgateError]
    if status in (400, 413, 422):
        cls = BadRequestError
    elif status in (401, 403):
        cls = AuthenticationError
    elif status == 404:
        cls = NotFoundError
    elif status == 409:
        cls = ConflictError
    elif status >= 500:
        cls = ServerError
    else:
        cls = RollgateError
    return cls(message, status, type, body, url)


def server_message(body: Any, fallback: str) -> tuple[str, str | None]:
    """The message in any of the shapes Rollgate answers with: ``{error: {message, type}}`` or ``{detail}``."""
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return err["message"], err.get("type") if isinstance(err.get("type"), str) else None
        if isinstance(err, str):
            return err, None
        if isinstance(body.get("detail"), str):
            return body["detail"], None
    if isinstance(body, str) and body.strip():
        return body.strip()[:2000], None
    return fallback, None
