"""The client against a real `rollgate serve` with its embedded sim engines (no mocks)."""
from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time
import unittest
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import rollgate  # noqa: E402
from rollgate_server import RollgateServer  # noqa: E402

SERVER = RollgateServer()
TASKS = [
    {"id": "add", "prompt": "What is 17 + 25?", "expected": "42"},
    {"id": "mul", "prompt": "What is 6 * 7?", "expected": "42"},
]


def setUpModule() -> None:
    SERVER.__enter__()


def tearDownModule() -> None:
    SERVER.stop()


def chat(base_url: str, key: str, content: str) -> dict:
    """One OpenAI chat call, as an agent makes it."""
    body = json.dumps({"model": "any", "messages": [{"role": "user", "content": content}], "max_tokens": 256}).encode()
    req = urllib.request.Request(f"{base_url}/chat/completions", data=body, method="POST",
                                 headers={"content-type": "application/json", "authorization": f"Bearer {key}"})
    with urllib.request.urlopen(req, timeout=120) as res:
        return json.loads(res.read())


class ClientTest(unittest.TestCase):
    client: rollgate.Client

    @classmethod
    def setUpClass(cls) -> None:
        cls.client = rollgate.Client(SERVER.url, timeout=120)

    def test_health_and_engines(self) -> None:
        h = self.client.health()
        self.assertTrue(h.ok)
        self.assertRegex(h.version, r"^\d+\.\d+\.\d+")
        engines = {e.id: e for e in self.client.engines()}
        self.assertEqual(set(engines), {"sim-vllm", "sim-sglang"})
        self.assertTrue(all(e.simulated for e in engines.values()))
        self.assertEqual(engines["sim-vllm"].kind, "vllm")

    def test_session_completions_traces_and_finish(self) -> None:
        s = self.client.create_session(engine="sim-vllm", metadata={"from": "python"})
        self.assertRegex(s.key, r"^[0-9a-f]{32}$")
        self.assertTrue(s.urls.openai.endswith(f"/s/{s.key}/v1"))
        answer = chat(s.urls.openai, s.key, "What is 2 + 2?")
        [c] = self.client.completions(s.id)
        self.assertEqual(c.status, "ok")
        self.assertEqual(c.response["id"].removeprefix("chatcmpl-"), c.id)
        self.assertEqual(answer["choices"][0]["message"]["content"], c.response["message"]["content"])
        self.assertGreater(len(c.prompt_ids), 0)
        self.assertEqual(len(c.output_ids), len(c.output_logprobs))
        [t] = self.client.traces(s.id)
        self.assertEqual(t.prompt_ids, c.prompt_ids)
        self.assertEqual(t.response_ids, c.output_ids)
        self.assertEqual(t.loss_mask, [1] * len(c.output_ids))
        done = self.client.finish_session(s.id, reward=0.5)
        self.assertEqual((done.status, done.reward, done.completion_count), ("finished", 0.5, 1))
        self.assertEqual(self.client.session(s.id).metadata, {"from": "python"})
        [row] = list(self.client.iter_traces(session=s.id))
        self.assertEqual((row.session_id, row.reward, row.response_ids), (s.id, 0.5, c.output_ids))
        [sft] = list(self.client.iter_sft(session=s.id))
        self.assertEqual(sft["messages"][0], {"role": "user", "content": "What is 2 + 2?"})
        self.assertEqual(sft["messages"][-1]["content"], answer["choices"][0]["message"]["content"])
        self.assertEqual(sft["reward"], 0.5)

    def test_errors_carry_the_servers_message(self) -> None:
        with self.assertRaises(rollgate.NotFoundError) as e:
            self.client.session("ses_doesnotexist")
        self.assertEqual((e.exception.status, e.exception.message), (404, "session not found"))
        with self.assertRaises(rollgate.BadRequestError) as e:
            self.client.submit(harness="builtin", dataset="demo:no-such-demo")
        self.assertIn('unknown demo dataset "no-such-demo"', e.exception.message)
        with self.assertRaises(rollgate.BadRequestError) as e:
            self.client.create_session(engine="no-such-engine")
        self.assertIn("unknown engine no-such-engine; known: sim-vllm, sim-sglang", str(e.exception))
        with self.assertRaises(rollgate.BadRequestError) as e:
            self.client.request("POST", "/api/policy-version", {"version": -1})
        self.assertIn("version", e.exception.message)
        with self.assertRaises(ValueError):
            self.client.pause("sometimes")
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            dead = sock.getsockname()[1]
        with self.assertRaises(rollgate.RollgateConnectionError) as e:
            rollgate.Client(f"http://127.0.0.1:{dead}", timeout=5).health()
        self.assertIn(f"could not reach Rollgate at http://127.0.0.1:{dead}", e.exception.message)

    def test_batch_submit_wait_progress_groups_and_export(self) -> None:
        seen: list[rollgate.Batch] = []
        batch_id = self.client.submit(harness="builtin", tasks=TASKS, engine="sim-vllm", n=3, concurrency=3)
        view = self.client.wait(batch_id, progress=seen.append, poll_interval=0.2, timeout=300)
        self.assertEqual(view.status, "completed")
        self.assertEqual((view.counts.total, view.counts.done), (6, 6))
        self.assertTrue(view.done)
        self.assertGreaterEqual(len(seen), 2, "progress is reported at the start and at the end")
        self.assertEqual(seen[-1].counts.done, 6)
        done_counts = [v.counts.done for v in seen]
        self.assertEqual(done_counts, sorted(done_counts), "progress only moves forward")
        groups = view.rewards_by_group()
        self.assertEqual(set(groups), {f"{batch_id}:add", f"{batch_id}:mul"})
        for rewards in groups.values():
            self.assertEqual(len(rewards), 3)
            self.assertTrue(all(r in (0, 1) for r in rewards))
        # Every exported row carries its sample's reward and group.
        reward_of = {s.session_id: s.reward for t in view.tasks for s in t.samples}
        rows = list(self.client.iter_traces(batch=batch_id, builder="per-request"))
        self.assertGreaterEqual(len(rows), 6)
        self.assertEqual({r.session_id for r in rows}, set(reward_of))
        for r in rows:
            self.assertEqual(r.reward, reward_of[r.session_id])
            self.assertEqual(r.group_id, f"{batch_id}:{r.task_id}")
            self.assertEqual(len(r.response_ids), len(r.loss_mask))
        with self.assertRaises(rollgate.ConflictError) as e:
            self.client.cancel(batch_id)
        self.assertIn("only a queued or running batch can be cancelled", e.exception.message)
        scored = self.client.rescore(engine="sim-sglang", batch=batch_id)
        self.assertGreater(scored["overall"]["n"], 0)
        self.assertEqual(scored["engine"], "sim-sglang")

    def test_callback_server_gets_the_batch_view(self) -> None:
        with rollgate.CallbackServer() as cb:
            batch_id = self.client.submit(harness="builtin", tasks=TASKS[:1], n=1, callback_url=cb.url)
            posted = cb.wait(batch_id, timeout=300)
        final = self.client.batch(batch_id)
        self.assertEqual(posted.status, "completed")
        self.assertEqual(posted.rewards_by_group(), final.rewards_by_group())

    def test_wait_timeout_and_cancel(self) -> None:
        batch_id = self.client.submit(harness="builtin", tasks=TASKS, n=20, concurrency=1)
        with self.assertRaises(rollgate.WaitTimeoutError):
            self.client.wait(batch_id, timeout=0.3, poll_interval=0.1)
        self.client.cancel(batch_id)
        with self.assertRaises(rollgate.BatchFailedError) as e:
            self.client.wait(batch_id, timeout=120, poll_interval=0.2, raise_on_failure=True)
        self.assertIn("ended cancelled", e.exception.message)

    def test_paused_queues_calls_and_policy_version_is_stamped(self) -> None:
        s = self.client.create_session(engine="sim-vllm")
        answers: list[dict] = []
        with self.client.paused(mode="queue"):
            self.assertTrue(all(e.paused for e in self.client.engines()))
            agent = threading.Thread(target=lambda: answers.append(chat(s.urls.openai, s.key, "What is 3 + 4?")))
            agent.start()
            time.sleep(0.5)
            self.assertEqual(answers, [], "the call waits while the engines are paused")
            self.assertEqual(self.client.set_policy_version(7), 7)
        agent.join(timeout=120)
        self.assertEqual(len(answers), 1, "the queued call is served after resume")
        self.assertFalse(any(e.paused for e in self.client.engines()))
        [c] = self.client.completions(s.id)
        self.assertEqual(c.policy_version, 7)
        self.client.finish_session(s.id, reward=1)
        [row] = list(self.client.iter_traces(session=s.id))
        self.assertEqual(row.policy_versions, [7])
        self.client.set_policy_version(0)

    def test_paused_resumes_when_the_block_raises(self) -> None:
        with self.assertRaises(RuntimeError):
            with self.client.paused(mode="reject"):
                raise RuntimeError("weight update failed")
        self.assertFalse(any(e.paused for e in self.client.engines()))


if __name__ == "__main__":
    unittest.main()
