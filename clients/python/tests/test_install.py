"""`pip install ./clients/python` works offline: the build backend is in the folder and needs nothing from PyPI."""
from __future__ import annotations

import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]


class InstallTest(unittest.TestCase):
    def test_pip_install_into_a_fresh_venv(self) -> None:
        try:
            import ensurepip
            ensurepip.version()  # Debian keeps the module but ships its wheels only with python3-venv
        except (ImportError, OSError, ValueError, StopIteration):
            self.skipTest("this Python has no ensurepip (Debian: apt-get install python3-venv)")
        with tempfile.TemporaryDirectory(prefix="rollgate-venv-") as d:
            subprocess.run([sys.executable, "-m", "venv", d], check=True, timeout=300)
            py = Path(d) / "bin" / "python"
            pip = subprocess.run([str(py), "-m", "pip", "install", "--no-index", "--disable-pip-version-check", str(PROJECT)],
                                 capture_output=True, text=True, timeout=300)
            self.assertEqual(pip.returncode, 0, pip.stdout[-2000:] + pip.stderr[-2000:])
            probe = subprocess.run([str(py), "-c", "import rollgate, sys; print(rollgate.__version__, rollgate.__file__)"],
                                   capture_output=True, text=True, cwd=d, timeout=60)
            self.assertEqual(probe.returncode, 0, probe.stderr)
            version, path = probe.stdout.split()
            self.assertEqual(version, "0.1.0")
            self.assertIn("site-packages", path, "the installed copy is imported, not the checkout")


if __name__ == "__main__":
    unittest.main()
