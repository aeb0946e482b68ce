"""Runs the Python client's test suite (stdlib unittest) and writes its counts for `npm test`'s tally:
``python3 run.py [RESULTS.json]``. Exit status 0 when every test passed."""
from __future__ import annotations

import json
import sys
import unittest
from pathlib import Path

if sys.version_info < (3, 10):
    sys.exit(f"the rollgate Python client needs Python >= 3.10 (this is {sys.version.split()[0]})")

here = Path(__file__).resolve().parent
suite = unittest.defaultTestLoader.discover(str(here), pattern="test_*.py", top_level_dir=str(here))
result = unittest.TextTestRunner(verbosity=2).run(suite)
failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
counts = {"passed": result.testsRun - failed - len(result.skipped), "failed": failed, "skipped": len(result.skipped)}
if len(sys.argv) > 1:
    Path(sys.argv[1]).write_text(json.dumps(counts))
sys.exit(0 if failed == 0 else 1)
