"""Python client for Rollgate's control API (standard library only)."""
from .callbacks import CallbackServer
from .client import DEFAULT_URL, Client
from .errors import (
    AuthenticationError,
    BadRequestError,
    BatchFailedError,
    ConflictError,
    NotFoundError,
    RateLimitError,
    RollgateConnectionError,
    RollgateError,
    ServerError,
    WaitTimeoutError,
)
from .types import (
    Batch,
    BatchCounts,
    Completion,
    Engine,
    Health,
    Sample,
    Session,
    SessionSummary,
    SessionUrls,
    TaskResult,
    Trace,
    TraceRow,
)

__version__ = "0.1.0"

__all__ = [
    "AuthenticationError", "BadRequestError", "Batch", "BatchCounts", "BatchFailedError", "CallbackServer", "Client",
    "Completion", "ConflictError", "DEFAULT_URL", "Engine", "Health", "NotFoundError", "RateLimitError",
    "RollgateConnectionError", "RollgateError", "Sample", "ServerError", "Session", "SessionSummary", "SessionUrls",
    "TaskResult", "Trace", "TraceRow", "WaitTimeoutError", "__version__",
]
