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


def test_the_app_shows_the_same_notice_once_in_the_chat(tmp_path):
    """The app opened in a folder outside git where Baton has made nothing yet says, once in
    its chat, the same line the CLI prints (both read `api.folder_notice`); opened again once
    the state is there, it says nothing of it."""
    from baton_tui import api
    from baton_tui.plan.current import store_new_plan
    from baton_tui.plan.model import parse_document

    from helpers.tui_support import make, ready, run, wait_for

    folder = tmp_path / "notes"
    folder.mkdir()
    notice = api.folder_notice(folder)
    assert notice is not None and notice.startswith(f"{folder} is not in a git repository")

    def chat_of(ws, wanted: str) -> str:
        """The chat's text (spaces taken out: it wraps) once it holds `wanted`."""
        found: dict = {}

        async def main():
            app = make(ws, detect_players=False)
            async with app.run_test(size=(120, 40)) as pilot:
                await ready(pilot)
                log = app.query_one("#chat-log")

                def text() -> str:
                    return "".join("".join(line.text for line in log.lines).split())

                await wait_for(pilot, lambda: wanted in text())
                await pilot.pause()
                found["text"] = text()
        run(main())
        return found["text"]

    ws = api.open_workspace(folder)
    try:
        first = chat_of(ws, "notinagitrepository")
        assert first.count("notinagitrepository") == 1, first
        assert "".join(f"baton: {notice}".split()) in first, first  # (wrapped: no spaces)
        store_new_plan(ws, parse_document({"version": 1, "goal": "g", "tasks": [
            {"id": 1, "title": "Smoke", "player": "script", "check": "true"}]}))
    finally:
        ws.close()
    assert (folder / ".baton" / "state").is_dir()
    ws = api.open_workspace(folder)
    try:
        assert api.folder_notice(folder) is None
        assert "notinagitrepository" not in chat_of(ws, "Saywhatyouwantbuilt")
    finally:
        ws.close()
