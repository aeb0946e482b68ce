"""The GRPO-style example, end to end on the sim engines of a real `rollgate serve`."""
from __future__ import annotations

import json
import subprocess
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from rollgate_server import RollgateServer  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "grpo_loop.py"


class GrpoExampleTest(unittest.TestCase):
    def test_two_steps_group_rewards_and_stamp_policy_versions(self) -> None:
        with RollgateServer() as server:
            run = subprocess.run([sys.executable, str(EXAMPLE), "--url", server.url, "--steps", "2", "-n", "3", "--json"],
                                 capture_output=True, text=True, timeout=900)
        self.assertEqual(run.returncode, 0, run.stderr[-3000:])
        self.assertIn("samples", run.stderr, "the progress bar is shown")
        steps = json.loads(run.stdout)
        self.assertEqual([s["step"] for s in steps], [0, 1])
        for s in steps:
            self.assertEqual(len(s["groups"]), 16, "demo:calculator has 16 prompts")
            sessions_per_group = {g: len(r) for g, r in s["groups"].items()}
            self.assertEqual(set(sessions_per_group.values()), {3})
            self.assertTrue(all(g.startswith(f"{s['batch']}:") for g in s["groups"]))
            self.assertTrue(all(r in (0, 1) for rewards in s["groups"].values() for r in rewards))
            # Group-relative advantages: zero-mean within every group.
            self.assertEqual(len(s["advantages"]), 48)
            self.assertAlmostEqual(sum(s["advantages"].values()), 0.0, places=4)
            self.assertGreater(s["trained_tokens"], 0)
        # Completions of step k were produced under policy version k (set under pause at the end of step k-1).
        self.assertEqual(steps[0]["policy_versions"], [0])
        self.assertEqual(steps[1]["policy_versions"], [1])


if __name__ == "__main__":
    unittest.main()
