"""Versions and the binary's own process form, without building anything.

- CHANGELOG.md is in Keep a Changelog form and its newest release is what `baton --version`
  prints, with the commit when Baton runs from a git checkout (read from `.git` as files).
- In the binary (`sys.frozen`), Baton's own processes and the agents' `baton` re-run the
  binary, and its internal `--baton-module` form runs only Baton's own modules.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import baton_tui
from baton_tui import frozen, layout, paths, version

ROOT = Path(__file__).resolve().parents[1]
RELEASE = re.compile(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$")


def releases() -> list[tuple[str, str]]:
    return [m.groups() for line in (ROOT / "CHANGELOG.md").read_text().splitlines()
            if (m := RELEASE.match(line))]


def test_the_changelog_is_in_keep_a_changelog_form():
    text = (ROOT / "CHANGELOG.md").read_text()
    lines = text.splitlines()
    assert lines[0] == "# Changelog"
    assert "keepachangelog.com" in text
    headings = [line for line in lines if line.startswith("## ")]
    assert headings[0] == "## [Unreleased]"
    assert all(RELEASE.match(h) for h in headings[1:]), headings
    found = releases()
    assert found, "no released version"
    numbers = [tuple(int(p) for p in v.split(".")) for v, _ in found]
    assert numbers == sorted(numbers, reverse=True), "newest first"
    dates = [d for _, d in found]
    assert dates == sorted(dates, reverse=True)
    for name in ["Unreleased", *(v for v, _ in found)]:  # each heading links somewhere
        assert re.search(rf"^\[{re.escape(name)}\]: \S+$", text, re.M), name
    for line in lines:
        if line.startswith("### "):
            assert line[4:] in ("Added", "Changed", "Deprecated", "Removed", "Fixed",
                                "Security"), line


def test_the_newest_release_is_the_package_version_and_what_baton_version_prints():
    newest = releases()[0][0]
    assert baton_tui.__version__ == newest
    out = subprocess.run([sys.executable, "-m", "baton_tui", "--version"], capture_output=True,
                         text=True, cwd=ROOT, timeout=60)
    assert out.returncode == 0, out.stderr
    assert re.fullmatch(rf"baton {re.escape(newest)}( \(commit [0-9a-f]{{7,40}}(-dirty)?\))?\n",
                        out.stdout), out.stdout


def test_from_a_git_checkout_the_version_names_its_commit():
    if not (ROOT / ".git").exists() or Path(baton_tui.__file__).parent != ROOT / "baton_tui":
        pytest.skip("not running from a git checkout of Baton")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                          text=True).stdout.strip()
    assert version.describe() == f"baton {baton_tui.__version__} (commit {head[:12]})"


def test_baton_version_loads_nothing_heavy():
    script = ("import sys\nfrom baton_tui.cli import main\nmain(['--version'])\n"
              "import json\nprint(json.dumps(sorted(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         cwd=ROOT, timeout=60)
    loaded = {name.split(".")[0] for name in json.loads(out.stdout.splitlines()[-1])}
    assert not loaded & {"pydantic", "textual", "rich", "anthropic", "openai", "git", "psutil",
                         "subprocess"}


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@localhost",
                               "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@localhost",
                               "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(cwd),
                               "PATH": "/usr/local/bin:/usr/bin:/bin"}).stdout.strip()


def test_the_commit_is_read_from_loose_and_packed_refs_and_from_a_worktree(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "f").write_text("x")
    _git(repo, "add", "f")
    _git(repo, "commit", "-q", "-m", "one")
    head = _git(repo, "rev-parse", "HEAD")
    assert version._from_git(str(repo)) == head
    _git(repo, "pack-refs", "--all")
    assert not (repo / ".git" / "refs" / "heads" / "main").exists()
    assert version._from_git(str(repo)) == head
    _git(repo, "worktree", "add", "-q", "-b", "side", str(tmp_path / "wt"))
    assert version._from_git(str(tmp_path / "wt")) == head
    _git(repo, "checkout", "-q", "--detach")
    assert version._from_git(str(repo)) == head
    assert version._from_git(str(tmp_path)) == ""  # no repository there


def test_a_recorded_commit_wins(tmp_path, monkeypatch):
    pkg = tmp_path / "baton_tui"
    pkg.mkdir()
    (pkg / "_commit").write_text("0123456789ab-dirty\n")
    monkeypatch.setattr(version, "__file__", str(pkg / "version.py"))
    assert version.commit() == "0123456789ab-dirty"
    (pkg / "_commit").unlink()
    assert version.commit() == ""  # no record and no checkout around it


def test_in_the_binary_own_processes_re_run_the_binary(monkeypatch):
    assert paths.own_module("baton_tui.runners.shim", "7") == [
        sys.executable, "-P", "-m", "baton_tui.runners.shim", "7"]
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", "/opt/x/baton")
    assert paths.own_module("baton_tui.runners.shim", "7") == [
        "/opt/x/baton", "--baton-module", "baton_tui.runners.shim", "7"]
    assert layout.shim_script() == '#!/bin/sh\nexec /opt/x/baton "$@"\n'


def test_only_batons_own_modules_run_in_the_internal_form(capsys):
    assert frozen.own_module_name("baton_tui")
    assert frozen.own_module_name("baton_tui.runners.shim")
    for name in ("os", "baton_tui_evil", "baton", "", "baton_tui..x", "baton_tui.x-y",
                 "runpy", "tests.conftest"):
        assert not frozen.own_module_name(name), name
        assert frozen.run_module(name, []) == 2
    assert "runs only Baton's own modules" in capsys.readouterr().err
    assert frozen.run_module("baton_tui.no_such_module", []) == 2


def test_the_internal_form_runs_a_module_as_python_m_would(tmp_path):
    script = ("import sys\nsys.argv = ['baton', '--baton-module', 'baton_tui', '--version']\n"
              "from baton_tui.frozen import main\nmain()\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         cwd=tmp_path, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"baton {baton_tui.__version__}")
    bad = subprocess.run([sys.executable, "-c", script.replace("'baton_tui'", "'json.tool'")],
                         capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert bad.returncode == 2 and "only Baton's own modules" in bad.stderr


def test_the_binary_command_imports_paths_only_for_the_internal_form(tmp_path):
    assert paths.RUN_MODULE.startswith(frozen._INTERNAL_PREFIX)
    assert frozen._internal_form([paths.RUN_MODULE, "baton_tui"])
    assert not frozen._internal_form(["--version"])
    assert not frozen._internal_form([paths.RUN_MODULE + "x", "baton_tui"])
    assert not frozen._internal_form([])
    out = subprocess.run([sys.executable, "-c", "import sys, baton_tui.frozen\n"
                          "print('baton_tui.paths' in sys.modules)"],
                         capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert out.stdout.strip() == "False", out.stdout + out.stderr


def test_the_binary_skips_gettext_lookups_only_in_a_missing_default_folder(tmp_path,
                                                                           monkeypatch):
    import gettext

    original = gettext.find
    monkeypatch.setattr(gettext, "find", original)  # put back after the test
    monkeypatch.setenv("LANGUAGE", "fr")
    monkeypatch.setattr(gettext, "_default_localedir", str(tmp_path / "missing"))
    catalogs = tmp_path / "locale"
    (catalogs / "fr" / "LC_MESSAGES").mkdir(parents=True)
    (catalogs / "fr" / "LC_MESSAGES" / "demo.mo").write_bytes(b"")
    frozen._skip_missing_catalogs()
    assert gettext.find("messages") is None
    assert gettext.find("messages", all=True) == []
    assert gettext.find("demo", str(catalogs)) == str(catalogs / "fr" / "LC_MESSAGES" / "demo.mo")
    assert gettext.gettext("usage: ") == "usage: "
    gettext.find = original
    monkeypatch.setattr(gettext, "_default_localedir", str(catalogs))  # a folder that exists
    frozen._skip_missing_catalogs()
    assert gettext.find is original
