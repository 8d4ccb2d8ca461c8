"""Hostile input gets one clear line or is shown whole — never a traceback, never a line
hidden from the person who approves it (issue 50): a multi-line `task-check`, a repository or
`BATON_HOME` whose path is not UTF-8, a tag named like the person's branch."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from conftest import BatonCLI, git, write_plan

SCRIPT_TASK = {"id": 1, "title": "Make f", "prompt": "p", "player": "script",
               "check": "echo made > f.txt"}


def test_a_multi_line_check_is_confirmed_and_shown_whole_inside_its_task(repo, baton):
    write_plan(repo / "p.json", [SCRIPT_TASK, {**SCRIPT_TASK, "id": 2, "title": "Other"}])
    assert baton("plan", "--from", "p.json").returncode == 0
    set_ = baton("task-check", "1", "true\nrm -rf /")
    assert set_.returncode == 0, set_.stderr
    assert set_.stdout.strip() == 'task 1: check = "true\\nrm -rf /" (2 lines)'  # one line
    shown = baton("plan").stdout.splitlines()
    first = next(i for i, line in enumerate(shown) if line.strip().startswith("1. Make f"))
    second = next(i for i, line in enumerate(shown) if line.strip().startswith("2. Other"))
    block = shown[first:second]
    assert any("check (2 lines" in line for line in block), block
    assert "      | true" in block and "      | rm -rf /" in block  # inside task 1's block
    assert not any(line.startswith("rm") for line in shown)


def _not_utf8(folder: Path, name: bytes) -> Path:
    path = Path(os.fsdecode(os.fsencode(folder) + b"/" + name))
    path.mkdir()
    return path


def test_a_repository_whose_path_is_not_utf8_is_one_clear_line(tmp_path):
    repo = _not_utf8(tmp_path, b"repo\xff")
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "i"], cwd=repo, check=True)
    write_plan(repo / "p.json", [SCRIPT_TASK])
    baton = BatonCLI(repo)
    for argv in (["plan", "--from", "p.json"], ["trust"], ["approve"], ["run"], ["doctor"],
                 ["status"]):
        result = baton(*argv)
        assert result.returncode == 2, (argv, result.stdout, result.stderr)
        assert "Traceback" not in result.stderr
        assert result.stderr.strip().splitlines() == [
            f"baton: the folder {tmp_path}/repo\\xff is not UTF-8 text: Baton keeps paths as "
            "text — rename it (or use another folder) to a UTF-8 name"], argv


def test_a_baton_home_whose_path_is_not_utf8_stops_the_run_before_any_task(repo, baton,
                                                                           tmp_path):
    write_plan(repo / "p.json", [SCRIPT_TASK])
    assert baton("plan", "--from", "p.json").returncode == 0
    home = os.fsdecode(os.fsencode(tmp_path) + b"/home\xfe")
    result = baton("run", "--approve", env={"BATON_HOME": home})
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert f"BATON_HOME {tmp_path}/home\\xfe is not UTF-8 text" in result.stderr
    tasks = baton.json("status", "--json")["tasks"]
    assert [t["state"] for t in tasks] != ["failed"]  # nothing ran, nothing failed
    doctor = baton("doctor", env={"BATON_HOME": home})
    assert doctor.returncode == 2 and "Traceback" not in doctor.stderr
    assert f"✗ BATON_HOME {tmp_path}/home\\xfe is not UTF-8 text" in doctor.stdout


def test_a_tag_named_like_the_branch_is_flagged_and_merged_around(repo, baton):
    write_plan(repo / "p.json", [SCRIPT_TASK])
    assert baton("plan", "--from", "p.json").returncode == 0
    git(repo, "tag", "main")  # git's own lookup takes the tag before the branch
    ran = baton("run", "--approve")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert baton.json("status", "--json")["plan"]["base_branch"] == "main"  # not heads/main
    merged = baton("handoff", "merge")
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert "a tag is named main too" in merged.stdout
    assert "all landed work is on main" in merged.stdout
    assert git(repo, "show", "refs/heads/main:f.txt") == "made"
