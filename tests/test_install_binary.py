"""From a built binary to `baton demo`, the way a person installs Baton: `install.sh` fetches
`dist/baton-<os>-<arch>` and its checksum from a server on 127.0.0.1, installs it as `baton`,
and the installed binary runs `--version`, then the whole demo — the conductor, the attempt
shims, the native agents on the scripted model server, their `baton report` — with only the
system's tools on PATH: no virtualenv, no checkout, no Python of Baton's.

The binary unpacks itself into `$XDG_CACHE_HOME/baton` on its first start (scripts/
self_unpacking.py), here a folder of the test's own.

The binary is built beforehand by `scripts/build-binary` (which .ci/run calls, about three
minutes on two cores; PyInstaller comes from PyPI, which tests never reach). Without it, or
with one older than the code, the test is skipped with the command to run — or fails, where
`BATON_REQUIRE_BINARY=1` (set by .ci/run) says the build must be there.
"""

from __future__ import annotations

import os
import platform
import re
import subprocess
from pathlib import Path

import pytest

from helpers.folder_server import FolderServer as Server

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
SYSTEM_PATH = ["/usr/local/bin", "/usr/bin", "/bin"]


def binary_name() -> str:
    arch = {"amd64": "x86_64", "aarch64": "arm64"}.get(platform.machine().lower(),
                                                       platform.machine().lower())
    return f"baton-{platform.system().lower()}-{arch}"


def built_binary() -> Path:
    binary = ROOT / "dist" / binary_name()
    why = None
    if not binary.is_file() or not (ROOT / "dist" / f"{binary.name}.sha256").is_file():
        why = f"no {binary.relative_to(ROOT)} (and .sha256)"
    else:
        newest = max(p.stat().st_mtime for p in (ROOT / "baton_tui").rglob("*.py"))
        if newest > binary.stat().st_mtime:
            why = f"{binary.relative_to(ROOT)} is older than baton_tui/"
    if why:
        message = f"{why}: build it with `scripts/build-binary`"
        if os.environ.get("BATON_REQUIRE_BINARY") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return binary


def clean_env(tmp_path: Path, path: list[str]) -> dict[str, str]:
    """The person's environment less anything Python or Baton: no venv, no PYTHONPATH."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTHON", "BATON_", "VIRTUAL_ENV", "PYINSTALLER", "_PYI"))
           and not k.lower().endswith("_proxy") and k not in ("LD_LIBRARY_PATH",)}
    env.update({"PATH": os.pathsep.join(path), "HOME": str(tmp_path / "home"),
                "XDG_CACHE_HOME": str(tmp_path / "cache"),  # where the binary unpacks itself
                "NO_PROXY": "127.0.0.1,localhost", "GIT_CONFIG_NOSYSTEM": "1"})
    return env


def test_install_sh_then_baton_demo_from_the_installed_binary(tmp_path):
    binary = built_binary()
    target = tmp_path / "bin"
    server = Server(binary.parent)
    try:
        env = clean_env(tmp_path, SYSTEM_PATH)
        env.update({"BATON_INSTALL_URL": server.url, "BATON_INSTALL_DIR": str(target)})
        result = subprocess.run(["sh", str(ROOT / "install.sh")], env=env, capture_output=True,
                                text=True, timeout=300, cwd=tmp_path, stdin=subprocess.DEVNULL)
    finally:
        server.close()
    assert result.returncode == 0, result.stdout + result.stderr
    baton = target / "baton"
    assert baton.read_bytes() == binary.read_bytes()
    assert f"to {baton}" in result.stdout and "is not on your PATH" in result.stdout

    env = clean_env(tmp_path, [str(target), *SYSTEM_PATH])
    version = subprocess.run(["baton", "--version"], env=env, capture_output=True, text=True,
                             timeout=120, cwd=tmp_path)
    assert version.returncode == 0, version.stderr
    assert re.fullmatch(r"baton \d+\.\d+\.\d+( \(commit [0-9a-f]+(-dirty)?\))?\n",
                        version.stdout), version.stdout

    base = tmp_path / "demo"
    demo = subprocess.run(["baton", "demo", "--dir", str(base)], env=env, capture_output=True,
                          text=True, timeout=600, cwd=tmp_path, stdin=subprocess.DEVNULL)
    assert demo.returncode == 0, demo.stdout[-4000:] + demo.stderr[-4000:]
    assert "all landed work is on main" in demo.stdout
    assert "tests on main after the merge: pass" in demo.stdout
    # the agents' `baton` was the installed binary's unpacked executable, not a Python
    shim = (base / "baton-home" / "bin" / "baton").read_text()
    unpacked = re.fullmatch(r'#!/bin/sh\nexec (\S+) "\$@"\n', shim)
    assert unpacked, shim
    exe = Path(unpacked.group(1))
    assert exe.parent.parent == tmp_path / "cache" / "baton" and exe.name == "baton", exe
    assert exe.parent.name.startswith(re.search(r"^id=(\w+)$", baton.read_bytes()[:4096]
                                                .decode(errors="replace"), re.M).group(1))
    status = subprocess.run(["baton", "-C", str(base / "textstats"), "status", "--json"],
                            env=env, capture_output=True, text=True, timeout=120)
    assert status.returncode == 0, status.stderr
    assert '"state": "merged"' in status.stdout


def test_the_binary_runs_only_batons_own_modules_in_its_internal_form(tmp_path):
    binary = built_binary()
    env = clean_env(tmp_path, SYSTEM_PATH)
    evil = tmp_path / "baton_tui"  # a checkout's package in the working directory
    evil.mkdir()
    (evil / "__init__.py").write_text("raise SystemExit('the working directory ran')\n")
    (evil / "__main__.py").write_text("raise SystemExit('the working directory ran')\n")
    env["PYTHONPATH"] = str(tmp_path)
    ok = subprocess.run([str(binary), "--baton-module", "baton_tui", "--version"], env=env,
                        capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert ok.returncode == 0 and ok.stdout.startswith("baton "), ok.stdout + ok.stderr
    for name in ("json.tool", "baton_tui_x", "os"):
        bad = subprocess.run([str(binary), "--baton-module", name], env=env,
                             capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert bad.returncode == 2, bad.stdout + bad.stderr
        assert "only Baton's own modules" in bad.stderr
