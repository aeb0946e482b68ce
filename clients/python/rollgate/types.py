"""Typed views of Rollgate's JSON. Every view keeps the full answer in ``raw`` so new server fields are never lost."""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")
_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


def _snake(name: str) -> str:
    return _CAMEL.sub("_", name).lower()


def from_json(cls: type[T], data: dict[str, Any], **nested: Any) -> T:
    """Builds ``cls`` from a camelCase or snake_case dict; unknown keys stay in ``raw`` only."""
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    values: dict[str, Any] = {}
    for key, value in data.items():
        name = _snake(key)
        if name in names and name != "raw":
            values[name] = value
    values.update(nested)
    if "raw" in names:
        values["raw"] = data
    return cls(**values)


@dataclass
class Health:
    ok: bool
    version: str
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class SessionUrls:
    openai: str
    anthropic: str
    gemini: str


@dataclass
class Session:
    """A new session: give ``urls.openai`` (or the others) and ``key`` to the agent. The key is shown only once."""
    id: str
    key: str
    engine: str | None
    urls: SessionUrls
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class SessionSummary:
    id: str
    status: str
    reward: float | None = None
    engine_id: str | None = None
    harness: str | None = None
    task_id: str | None = None
    batch_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    created_at: int | None = None
    finished_at: int | None = None
    completion_count: int = 0
    prompt_tokens: int = 0
    output_tokens: int = 0
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class Completion:
    """One engine call as recorded: the engine's own token ids and per-token logprobs."""
    id: str
    session_id: str
    seq: int
    status: str
    engine_id: str | None = None
    policy_version: int = 0
    finish_reason: str | None = None
    prompt_ids: list[int] = field(default_factory=list)
    output_ids: list[int] = field(default_factory=list)
    output_logprobs: list[float] = field(default_factory=list)
    response: dict[str, Any] | None = None
    error: str | None = None
    retry_of: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class Trace:
    """A training trace built from a session's completions (DESIGN §6)."""
    id: str
    session_id: str
    builder: str
    completion_ids: list[str] = field(default_factory=list)
    prompt_ids: list[int] = field(default_factory=list)
    response_ids: list[int] = field(default_factory=list)
    loss_mask: list[int] = field(default_factory=list)
    response_logprobs: list[float] = field(default_factory=list)
    reward: float | None = None
    policy_versions: list[int] = field(default_factory=list)
    breaks: list[dict[str, Any]] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class TraceRow:
    """One line of the training export (``GET /api/export``, snake_case, DESIGN §8)."""
    trace_id: str
    session_id: str
    task_id: str | None = None
    batch_id: str | None = None
    group_id: str | None = None
    sample_index: int | None = None
    engine: str | None = None
    policy_versions: list[int] = field(default_factory=list)
    prompt_ids: list[int] = field(default_factory=list)
    response_ids: list[int] = field(default_factory=list)
    loss_mask: list[int] = field(default_factory=list)
    response_logprobs: list[float] = field(default_factory=list)
    reward: float | None = None
    messages: list[dict[str, Any]] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class Sample:
    sample_index: int
    session_id: str
    status: str
    reward: float | None = None
    outcome: str | None = None
    exit_code: int | None = None
    duration_ms: float | None = None
    completion_count: int = 0
    error: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class TaskResult:
    task_id: str
    group_id: str
    mean_reward: float | None = None
    rewards: list[float | None] = field(default_factory=list)
    samples: list[Sample] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class BatchCounts:
    total: int = 0
    queued: int = 0
    running: int = 0
    finished: int = 0
    failed: int = 0
    interrupted: int = 0
    done: int = 0
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


TERMINAL_BATCH_STATUSES = frozenset({"completed", "failed", "cancelled", "interrupted"})


@dataclass
class Batch:
    """A batch's status and per-task rewards (``GET /api/batches/:id``; also the callback body)."""
    id: str
    status: str
    error: str | None = None
    counts: BatchCounts = field(default_factory=BatchCounts)
    mean_reward: float | None = None
    pass_at_k: dict[str, float] = field(default_factory=dict)
    tasks: list[TaskResult] = field(default_factory=list)
    callback: dict[str, Any] | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def done(self) -> bool:
        """The batch reached an end (completed, failed, cancelled or interrupted)."""
        return self.status in TERMINAL_BATCH_STATUSES

    def rewards_by_group(self) -> dict[str, list[float | None]]:
        """GRPO groups: ``group_id`` (``<batch>:<task>``) → rewards by sample index."""
        return {t.group_id: list(t.rewards) for t in self.tasks}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Batch":
        tasks = [
            from_json(TaskResult, t, samples=[from_json(Sample, s) for s in t.get("samples", [])])
            for t in data.get("tasks", [])
        ]
        return from_json(cls, data, counts=from_json(BatchCounts, data.get("counts") or {}), tasks=tasks)


@dataclass
class Engine:
    id: str
    kind: str
    model: str
    mode: str
    simulated: bool = False
    paused: bool = False
    policy_version: int = 0
    replicas: list[dict[str, Any]] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict, repr=False)
