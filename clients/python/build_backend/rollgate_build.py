"""PEP 517 build backend using only the standard library: wheels (regular and editable) and sdists of the
``rollgate`` package. Metadata comes from pyproject.toml's [project] table."""
from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "rollgate"


def _project() -> dict[str, str]:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    try:
        import tomllib  # Python 3.11+
        return {k: v for k, v in tomllib.loads(text)["project"].items() if isinstance(v, str)}
    except ImportError:  # Python 3.10: the [project] table holds only `key = "string"` lines
        table = text.split("[project]", 1)[1].split("\n[", 1)[0]
        return dict(re.findall(r'^(\w[\w-]*)\s*=\s*"([^"]*)"', table, re.M))


def _metadata() -> str:
    p = _project()
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {p['name']}",
        f"Version: {p['version']}",
        f"Summary: {p.get('description', '')}",
        f"Requires-Python: {p.get('requires-python', '>=3.10')}",
        f"License: {p.get('license', '')}",
    ]
    readme = ROOT / p.get("readme", "README.md")
    body = readme.read_text(encoding="utf-8") if readme.exists() else ""
    if body:
        lines.append("Description-Content-Type: text/markdown")
    return "\n".join(lines) + "\n\n" + body


def _dist_name() -> str:
    p = _project()
    return f"{p['name'].replace('-', '_')}-{p['version']}"


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def _write_wheel(wheel_directory: str, files: dict[str, bytes]) -> str:
    dist = _dist_name()
    info = f"{dist}.dist-info"
    files = dict(files)
    files[f"{info}/METADATA"] = _metadata().encode()
    files[f"{info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: rollgate_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = [_record_line(path, data) for path, data in files.items()] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    name = f"{dist}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as zf:
        for path, data in files.items():
            zf.writestr(zipfile.ZipInfo(path, date_time=(2020, 1, 1, 0, 0, 0)), data)
    return name


def _package_files() -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        out[path.relative_to(ROOT).as_posix()] = path.read_bytes()
    return out


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, _package_files())


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    # A .pth file puts this folder on sys.path, so edits to rollgate/ take effect without reinstalling.
    return _write_wheel(wheel_directory, {f"{PACKAGE}_editable.pth": (str(ROOT) + "\n").encode()})


def build_sdist(sdist_directory, config_settings=None):
    dist = _dist_name()
    name = f"{dist}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as tf:
        for rel in ["pyproject.toml", "README.md", *sorted(_package_files()), "build_backend/rollgate_build.py"]:
            path = ROOT / rel
            if path.exists():
                tf.add(path, arcname=f"{dist}/{rel}")
        pkg_info = _metadata().encode()
        ti = tarfile.TarInfo(f"{dist}/PKG-INFO")
        ti.size = len(pkg_info)
        tf.addfile(ti, io.BytesIO(pkg_info))
    return name
