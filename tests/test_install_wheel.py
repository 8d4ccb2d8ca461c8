"""The wheel carries everything: built from this checkout and installed into a fresh virtualenv
the way `pipx install` / `uv tool install` do it (a venv of its own, only its `baton` on PATH),
it runs `baton demo` to the end — offline — with its styles, skills and demo inside.

Tests never reach a package registry: the wheel is built without build isolation (hatchling
is in the test extra) and installed with `--no-index --no-deps`; Baton's dependencies are
then lent to the fresh venv from the test's own environment by a `.pth` line, after the
wheel's own files, so `baton_tui` itself can only come from the wheel. Whether the wheel's
declared dependencies are satisfied is checked as pip would (`pip check`).
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

import baton_tui

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
SYSTEM_PATH = ["/usr/local/bin", "/usr/bin", "/bin"]


def run(argv: list[str], **kwargs) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(argv, capture_output=True, text=True, **kwargs)
    assert result.returncode == 0, (argv, result.stdout[-4000:], result.stderr[-4000:])
    return result


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheels")
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-build-isolation", "--no-deps",
         "--no-index", "-w", str(out), str(ROOT)], timeout=300)
    (found,) = out.glob("baton_tui-*.whl")
    return found


def test_the_wheel_holds_the_styles_the_skills_and_the_demo(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "baton_tui/tui/baton.tcss" in names
    skills = {n for n in names if n.startswith("baton_tui/_skills/")}
    assert {f"baton_tui/_skills/{p.name}" for p in (ROOT / "skills").glob("*.md")} == skills
    for module in ("baton_tui/demo/sample.py", "baton_tui/demo/server/__init__.py",
                   "baton_tui/demo/agent.py", "baton_tui/frozen.py", "baton_tui/version.py"):
        assert module in names
    meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
    text = zipfile.ZipFile(wheel).read(meta).decode()
    assert f"Version: {baton_tui.__version__}\n" in text
    assert "Requires-Python: >=3.11" in text
    entry = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "baton = baton_tui.cli:entry" in zipfile.ZipFile(wheel).read(entry).decode()


def test_a_fresh_venv_from_the_wheel_runs_baton_demo(wheel, tmp_path):
    venv = tmp_path / "tool-venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)], timeout=120)
    python = venv / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(python)]
    run([*pip, "install", "-q", "--no-index", "--no-deps", str(wheel)], timeout=300)
    site = Path(run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()"
                     "['purelib'])"]).stdout.strip())
    assert (site / "baton_tui" / "_skills" / "tdd.md").is_file()
    assert (site / "baton_tui" / "tui" / "baton.tcss").is_file()
    # the dependencies, lent after the wheel's own files (see the module's docstring)
    (site / "zz_lent_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    run([*pip, "check"], timeout=120)
    where = run([str(python), "-c", "import baton_tui; print(baton_tui.__file__)"],
                cwd=tmp_path).stdout.strip()
    assert Path(where).is_relative_to(site), where

    # only `baton` on PATH, as pipx and uv link it, beside the system's tools
    exposed = tmp_path / "local-bin"
    exposed.mkdir()
    (exposed / "baton").symlink_to(venv / "bin" / "baton")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTHON", "BATON_", "VIRTUAL_ENV"))
           and not k.lower().endswith("_proxy")}
    env.update({"PATH": os.pathsep.join([str(exposed), *SYSTEM_PATH]),
                "HOME": str(tmp_path / "home"), "NO_PROXY": "127.0.0.1,localhost",
                "GIT_CONFIG_NOSYSTEM": "1"})
    version = run(["baton", "--version"], env=env, cwd=tmp_path, timeout=120).stdout
    assert version.startswith(f"baton {baton_tui.__version__}")
    if (ROOT / ".git").exists():
        assert "(commit " in version  # the wheel's build recorded it
    base = tmp_path / "demo"
    demo = run(["baton", "demo", "--dir", str(base)], env=env, cwd=tmp_path, timeout=600,
               stdin=subprocess.DEVNULL)
    assert "all landed work is on main" in demo.stdout
    assert "tests on main after the merge: pass" in demo.stdout
    shim = (base / "baton-home" / "bin" / "baton").read_text()
    assert str(python) in shim and str(site) in shim  # agents ran this install's Baton
