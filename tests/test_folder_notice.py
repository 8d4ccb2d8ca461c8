"""Outside git, the first command that makes Baton's state in a folder says, in one line on
stderr, that this is folder mode and what it means; later commands say nothing of it."""

from __future__ import annotations

from conftest import BatonCLI, write_plan


def test_folder_mode_is_announced_once(tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    baton = BatonCLI(folder)
    write_plan(folder / "p.json", [{"id": 1, "title": "Smoke", "player": "script",
                                    "check": "true"}])
    assert baton("status").stderr == ""  # reading creates nothing, says nothing
    first = baton("plan", "--from", "p.json")
    assert first.returncode == 0, first.stderr
    notice = first.stderr.splitlines()
    assert len(notice) == 1 and notice[0].startswith(f"baton: note: {folder} is not in a git "
                                                     "repository"), first.stderr
    assert "folder mode" in notice[0] and "one at a time" in notice[0] and "git init" in notice[0]
    assert (folder / ".baton" / "state").is_dir()
    for argv in (["task-title", "1", "Smoke again"], ["plan"], ["status"]):
        again = baton(*argv)
        assert again.returncode == 0 and again.stderr == "", (argv, again.stderr)


def test_a_refused_plan_creates_nothing_and_says_no_notice(tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "bad.json").write_text('{"version": 1, "goal": "g", "tasks": [{"id": 1}]}')
    result = BatonCLI(folder)("plan", "--from", "bad.json")
    assert result.returncode == 2
    assert "folder mode" not in result.stderr
    assert not (folder / ".baton").exists()


def test_a_git_repository_gets_no_notice(repo, baton):
    write_plan(repo / "p.json", [{"id": 1, "title": "Smoke", "player": "script", "check": "true"}])
    result = baton("plan", "--from", "p.json")
    assert result.returncode == 0 and result.stderr == ""
