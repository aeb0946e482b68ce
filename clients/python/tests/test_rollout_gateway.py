"""Replays, against Rollgate, the HTTP sequence verifiers' `RolloutGatewayMixin` performs with prime-rl's
rollout gateway (PR #1757), with an OpenAI-style agent loop in between:

  trainer: POST {gw}/v1/rollouts/{id}/register  {model, sampling_params, max_turns, max_seq_len}
  agent:   OPENAI_BASE_URL={gw}/v1/rollouts/{id} → POST …/chat/completions (streamed), tool calls run locally
  trainer: GET  {gw}/v1/rollouts/{id}/trajectory → {trajectory, prompt, completion, is_truncated}
  trainer: POST {gw}/v1/rollouts/{id}/unregister   (POST …/cancel first when the rollout is cancelled)

and checks the returned trajectory token by token against the completions Rollgate recorded and the
answers the agent received. Plain urllib: the mixin's calls are plain HTTP (httpx), nothing more.
"""
from __future__ import annotations

import json
import sys
import unittest
import urllib.error
import urllib.request
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from rollgate_server import RollgateServer  # noqa: E402

SERVER = RollgateServer()
MODEL = "Qwen/Qwen3-8B"
CALCULATOR = {
    "type": "function",
    "function": {
        "name": "calculator",
        "description": "Evaluate an arithmetic expression",
        "parameters": {"type": "object", "properties": {"expression": {"type": "string"}}, "required": ["expression"]},
    },
}


def setUpModule() -> None:
    SERVER.__enter__()


def tearDownModule() -> None:
    SERVER.stop()


def http(method: str, url: str, body: object | None = None) -> tuple[int, object]:
    data = None if body is None else json.dumps(body).encode()
    # Like httpx's `post(url, json=None)`: no body, no content-type.
    headers = {} if data is None else {"content-type": "application/json"}
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=120) as res:
            text = res.read()
            return res.status, json.loads(text) if text else {}
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def stream_chat(base_url: str, messages: list, tools: list) -> tuple[dict, int]:
    """One streamed chat call as the OpenAI SDK makes it; answers the assembled message and the chunk count."""
    body = json.dumps({"model": "whatever-the-agent-says", "messages": messages, "tools": tools, "stream": True}).encode()
    req = urllib.request.Request(f"{base_url}/chat/completions", data=body, method="POST",
                                 headers={"content-type": "application/json", "authorization": "Bearer agent-has-no-key"})
    content, reasoning, calls, chunks = "", "", {}, 0
    with urllib.request.urlopen(req, timeout=120) as res:
        assert res.headers["content-type"].startswith("text/event-stream"), res.headers["content-type"]
        for raw in res:
            line = raw.decode().strip()
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            chunks += 1
            choice = json.loads(line[6:])["choices"]
            if not choice:
                continue
            delta = choice[0]["delta"]
            content += delta.get("content") or ""
            reasoning += delta.get("reasoning_content") or ""
            for tc in delta.get("tool_calls") or []:
                call = calls.setdefault(tc["index"], {"id": "", "type": "function", "function": {"name": "", "arguments": ""}})
                call["id"] = tc.get("id") or call["id"]
                call["function"]["name"] += (tc.get("function") or {}).get("name") or ""
                call["function"]["arguments"] += (tc.get("function") or {}).get("arguments") or ""
    message = {"role": "assistant", "content": content, "reasoning": reasoning, "tool_calls": [calls[i] for i in sorted(calls)]}
    return message, chunks


def calculator(expression: str) -> str:
    allowed = set("0123456789+-*/(). ")
    if not set(expression) <= allowed:
        return "error: unsupported expression"
    return str(eval(expression, {"__builtins__": {}}))  # noqa: S307 (digits and operators only)


class RolloutGatewayTest(unittest.TestCase):
    def gw(self, rollout_id: str, suffix: str) -> str:
        return f"{SERVER.url}/v1/rollouts/{rollout_id}/{suffix}"

    def test_verifiers_sequence_and_trajectory_token_by_token(self) -> None:
        rollout_id = f"rollout_{uuid.uuid4().hex[:8]}"
        sampling = {"max_tokens": 512, "temperature": 1.0, "extra_body": {"top_k": 20}}
        status, reg = http("POST", self.gw(rollout_id, "register"),
                           {"model": MODEL, "sampling_params": sampling, "max_turns": 8, "max_seq_len": 32768})
        self.assertEqual(status, 200)
        self.assertEqual({k: reg[k] for k in ("rollout_id", "status", "model", "max_turns", "max_seq_len")},
                         {"rollout_id": rollout_id, "status": "active", "model": MODEL, "max_turns": 8, "max_seq_len": 32768})
        status, again = http("POST", self.gw(rollout_id, "register"), {"model": MODEL})
        self.assertEqual((status, again), (409, {"detail": f"Rollout already registered: {rollout_id}"}))

        # The agent: an OpenAI-style tool loop against OPENAI_BASE_URL = {gw}/v1/rollouts/{id}.
        base_url = f"{SERVER.url}/v1/rollouts/{rollout_id}"
        messages: list = [{"role": "system", "content": "You are a careful assistant with a calculator."},
                          {"role": "user", "content": "What is (12 + 18) * (7 - 2) / 3?"}]
        sent, received = [], []
        for _ in range(6):
            sent.append(json.loads(json.dumps(messages)))
            message, chunks = stream_chat(base_url, messages, [CALCULATOR])
            self.assertGreater(chunks, 3, "tokens stream as they are produced, not as one synthesized chunk")
            received.append(message)
            wire = {"role": "assistant", "content": message["content"], "tool_calls": message["tool_calls"]} if message["tool_calls"] \
                else {"role": "assistant", "content": message["content"]}
            messages.append(wire)
            if not message["tool_calls"]:
                break
            for call in message["tool_calls"]:
                args = json.loads(call["function"]["arguments"])
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": calculator(args["expression"])})
        self.assertGreaterEqual(len(received), 2, "the sim calls the calculator, then answers")
        self.assertIn("50", received[-1]["content"])

        status, traj = http("GET", self.gw(rollout_id, "trajectory"))
        self.assertEqual(status, 200)
        self.assertEqual((traj["rollout_id"], traj["status"], traj["num_turns"], traj["model"], traj["is_truncated"]),
                         (rollout_id, "active", len(received), MODEL, False))
        self.assertEqual(traj["prompt"], sent[0])
        steps = traj["trajectory"]
        self.assertEqual(len(steps), len(received))
        self.assertEqual(traj["completion"], (steps[-1]["prompt"] + steps[-1]["completion"])[len(sent[0]):])

        # What Rollgate recorded for the rollout's session, with each token's text.
        session_id = reg["session_id"]
        status, recorded = http("GET", f"{SERVER.url}/api/sessions/{session_id}/completions?pieces=1")
        self.assertEqual(status, 200)
        completions = recorded["completions"]
        self.assertEqual(len(completions), len(steps))
        for step, rec, prompt, got in zip(steps, completions, sent, received):
            self.assertEqual(set(step), {"prompt", "completion", "tokens", "reward", "advantage", "is_truncated", "trajectory_id", "extras"})
            self.assertEqual(step["prompt"], prompt)
            [assistant] = step["completion"]
            self.assertEqual((assistant["role"], assistant["content"], assistant["reasoning_content"]),
                             ("assistant", got["content"], got["reasoning"]))
            self.assertEqual(assistant["tool_calls"] or [], got["tool_calls"])
            tokens = step["tokens"]
            # Token by token: the engine's own ids and logprobs, masks as verifiers builds them.
            self.assertEqual(tokens["prompt_ids"], rec["promptIds"])
            self.assertEqual(tokens["completion_ids"], rec["outputIds"])
            self.assertEqual(len(tokens["completion_logprobs"]), len(tokens["completion_ids"]))
            for a, b in zip(tokens["completion_logprobs"], rec["outputLogprobs"]):
                self.assertAlmostEqual(a, b, places=6)
            self.assertTrue(all(lp <= 0 for lp in tokens["completion_logprobs"]))
            self.assertEqual(tokens["prompt_mask"], [0] * len(tokens["prompt_ids"]))
            self.assertEqual(tokens["completion_mask"], [1] * len(tokens["completion_ids"]))
            self.assertEqual((tokens["overlong_prompt"], tokens["is_truncated"], step["is_truncated"]), (False, False, False))
            self.assertEqual((step["reward"], step["advantage"], step["trajectory_id"]), (None, None, session_id))
            # The sampled tokens spell exactly what the agent received over the stream.
            text = "".join(rec["outputPieces"])
            expected = f"<think>{got['reasoning']}</think>{got['content']}"
            expected += "\n".join(
                "<tool_call>\n" + json.dumps({"name": c["function"]["name"], "arguments": json.loads(c["function"]["arguments"])}) + "\n</tool_call>"
                for c in got["tool_calls"])
            self.assertEqual(text, expected + "<|im_end|>")
            # The registered sampling parameters reached the engine (extra_body flattened, max_tokens renamed).
            self.assertEqual(rec["requestReceived"]["max_completion_tokens"], 512)
            self.assertEqual(rec["requestReceived"]["top_k"], 20)
            self.assertEqual(rec["requestReceived"]["model"], MODEL)

        status, session = http("GET", f"{SERVER.url}/api/sessions/{session_id}")
        self.assertEqual((session["harness"], session["status"], session["completionCount"]), ("rollout-gateway", "active", len(steps)))
        status, unreg = http("POST", self.gw(rollout_id, "unregister"))
        self.assertEqual((status, unreg), (200, {"rollout_id": rollout_id, "status": "active"}))
        self.assertEqual(http("GET", f"{SERVER.url}/api/sessions/{session_id}")[1]["status"], "finished")
        self.assertEqual(http("GET", self.gw(rollout_id, "trajectory")), (404, {"detail": f"Rollout not found: {rollout_id}"}))
        self.assertEqual(http("POST", self.gw(rollout_id, "unregister"))[0], 404)

    def test_cancel_then_unregister(self) -> None:
        rollout_id = f"rollout_{uuid.uuid4().hex[:8]}"
        self.assertEqual(http("POST", self.gw(rollout_id, "register"), {"model": MODEL})[0], 200)
        status, body = http("POST", self.gw(rollout_id, "cancel"))
        self.assertEqual((status, body), (200, {"rollout_id": rollout_id, "status": "cancelled"}))
        status, err = http("POST", self.gw(rollout_id, "chat/completions"), {"model": MODEL, "messages": [{"role": "user", "content": "hi"}]})
        self.assertEqual(status, 409)
        self.assertEqual(err["error"]["message"], f"Rollout cancelled: {rollout_id}")
        status, reg = http("GET", self.gw(rollout_id, "trajectory"))
        self.assertEqual((reg["status"], reg["num_turns"], reg["trajectory"], reg["prompt"], reg["completion"]), ("cancelled", 0, [], [], []))
        session_id = reg["session_id"]
        self.assertEqual(http("POST", self.gw(rollout_id, "unregister")), (200, {"rollout_id": rollout_id, "status": "cancelled"}))
        self.assertEqual(http("GET", f"{SERVER.url}/api/sessions/{session_id}")[1]["status"], "interrupted")

    def test_max_turns_unknown_rollout_and_bad_bodies(self) -> None:
        rollout_id = f"rollout_{uuid.uuid4().hex[:8]}"
        self.assertEqual(http("POST", self.gw(rollout_id, "register"), {"model": MODEL, "max_turns": 1})[0], 200)
        ask = {"model": MODEL, "messages": [{"role": "user", "content": "What is 2 + 2?"}]}
        status, first = http("POST", self.gw(rollout_id, "chat/completions"), ask)
        self.assertEqual(status, 200)
        self.assertEqual(first["object"], "chat.completion")
        status, second = http("POST", self.gw(rollout_id, "chat/completions"), ask)
        self.assertEqual(status, 409)
        self.assertEqual(second["error"]["message"], f"Rollout completed: {rollout_id}")
        self.assertEqual(http("GET", self.gw(rollout_id, "trajectory"))[1]["status"], "completed")
        status, err = http("POST", self.gw("rollout_unknown", "chat/completions"), ask)
        self.assertEqual((status, err["error"]["message"]), (404, "Rollout not found: rollout_unknown"))
        self.assertEqual(http("POST", self.gw("rollout_unknown", "cancel")), (404, {"detail": "Rollout not found: rollout_unknown"}))
        status, err = http("POST", self.gw(rollout_id + "x", "register"), {"sampling_params": {}})
        self.assertEqual(status, 422)
        self.assertIn("model", err["detail"])
        other = f"rollout_{uuid.uuid4().hex[:8]}"
        http("POST", self.gw(other, "register"), {"model": MODEL})
        status, err = http("POST", self.gw(other, "chat/completions"), {"model": MODEL})
        self.assertEqual((status, err["error"]["message"]), (400, "Chat request must include a `messages` array."))
        for rid in (rollout_id, other):
            self.assertEqual(http("POST", self.gw(rid, "unregister"))[0], 200)


if __name__ == "__main__":
    unittest.main()
