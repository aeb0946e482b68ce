#!/usr/bin/env python3
"""A GRPO-style training loop driven through Rollgate (standard library only).

Each step: submit n samples per prompt → wait (with a progress bar) → pull the traces → group rewards by
``group_id`` → compute group-relative advantages → "train" → update the engine weights with generation
paused → bump the policy version, so the next step's completions say which weights produced them.

There is no model here: ``train_step`` computes the policy-gradient objective from the exported logprobs
and ``update_weights`` is where your trainer pushes new weights to vLLM/SGLang. Everything else is what a
real loop does. Run it against a server: ``rollgate serve`` then ``python grpo_loop.py --url http://127.0.0.1:8321``.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

import rollgate  # noqa: E402


def progress_bar(view: rollgate.Batch) -> None:
    c = view.counts
    width = 30
    filled = int(width * c.done / c.total) if c.total else 0
    mean = "-" if view.mean_reward is None else f"{view.mean_reward:.2f}"
    print(f"\r  [{'#' * filled}{'.' * (width - filled)}] {c.done}/{c.total} samples, {c.running} running, mean reward {mean}",
          end="\n" if view.done else "", file=sys.stderr, flush=True)


def group_advantages(rows: list[rollgate.TraceRow]) -> dict[str, float]:
    """GRPO: each sample's reward minus its group's mean, over the group's standard deviation."""
    by_group: dict[str, dict[str, float]] = defaultdict(dict)
    for r in rows:
        if r.group_id is not None and r.reward is not None:
            by_group[r.group_id][r.session_id] = r.reward  # one reward per sample, however many traces it has
    advantages: dict[str, float] = {}
    for rewards in by_group.values():
        values = list(rewards.values())
        mean = sum(values) / len(values)
        std = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
        for session_id, reward in rewards.items():
            advantages[session_id] = (reward - mean) / (std + 1e-6)
    return advantages


def train_step(rows: list[rollgate.TraceRow], advantages: dict[str, float]) -> dict[str, float]:
    """The policy-gradient objective over the sampled tokens (loss mask 1), from the engine's own logprobs."""
    objective, tokens = 0.0, 0
    for r in rows:
        adv = advantages.get(r.session_id, 0.0)
        for lp, m in zip(r.response_logprobs, r.loss_mask):
            if m:
                objective += adv * lp
                tokens += 1
    return {"objective": objective / max(tokens, 1), "trained_tokens": tokens}


def update_weights(step: int) -> None:
    """Push the new weights to the engines here (NCCL broadcast, a checkpoint reload…). Generation is paused."""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", default=os.environ.get("ROLLGATE_URL", rollgate.DEFAULT_URL))
    ap.add_argument("--token-file", help="the server's <data-dir>/control-token (needed off loopback)")
    ap.add_argument("--dataset", default="demo:calculator")
    ap.add_argument("--harness", default="builtin")
    ap.add_argument("--engine", default=None)
    ap.add_argument("-n", "--samples", type=int, default=4, help="samples per prompt (the GRPO group size)")
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--json", action="store_true", help="print a JSON summary on stdout at the end")
    args = ap.parse_args()

    client = rollgate.Client(args.url, token_file=args.token_file)
    print(f"Rollgate {client.health().version} at {args.url}", file=sys.stderr)
    summary = []
    for step in range(args.steps):
        print(f"step {step}: policy version {step}", file=sys.stderr)
        batch_id = client.submit(dataset=args.dataset, harness=args.harness, engine=args.engine, n=args.samples,
                                 concurrency=args.concurrency, name=f"grpo step {step}")
        view = client.wait(batch_id, progress=progress_bar, raise_on_failure=True)
        rows = list(client.iter_traces(batch=batch_id))
        advantages = group_advantages(rows)
        stats = train_step(rows, advantages)
        with client.paused(mode="queue"):
            update_weights(step)
            client.set_policy_version(step + 1)
        groups = view.rewards_by_group()
        summary.append({
            "step": step, "batch": batch_id, "mean_reward": view.mean_reward, "groups": groups,
            "advantages": advantages, "policy_versions": sorted({v for r in rows for v in r.policy_versions}),
            "rows": len(rows), **stats,
        })
        print(f"  mean reward {view.mean_reward}, {len(groups)} groups, objective {stats['objective']:.4f} "
              f"over {stats['trained_tokens']} tokens", file=sys.stderr)
    if args.json:
        print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
