"""The editor extension and `baton web`, for real (tests/helpers/editor_kit.py): the web
client's state tests on node's test runner, mocha inside code-server's extension host against
a real `baton serve`, and a person's whole flow — goal, question, a task's player, model and
effort changed, approve, run, cards landed, a file's diff, merge — in Debian's Chromium,
through the VSIX that `scripts/build-vsix` builds installed into code-server, and through
`baton web`. Then git shows every task merged onto the person's branch.

They need the tool chain (`scripts/editor-toolchain`, about 8 minutes once; .ci/run installs
it): without it they skip with that command, or fail under BATON_REQUIRE_EDITOR_TOOLS=1.
`BATON_UPDATE_SCREENSHOTS=1` writes the light and dark screenshots into screenshots/."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import git
from helpers import editor_kit as kit

pytestmark = pytest.mark.slow

TASKS = {2: "Count words", 3: "Count lines", 4: "Command line", 5: "Tests", 6: "Document usage"}


@pytest.fixture(scope="module")
def tools() -> Path:
    folder = kit.toolchain()
    kit.build_extension(folder)
    return folder


def shots_dir(tmp_path: Path) -> Path:
    if os.environ.get("BATON_UPDATE_SCREENSHOTS") == "1":
        kit.SCREENSHOTS.mkdir(exist_ok=True)
        return kit.SCREENSHOTS
    folder = tmp_path / "shots"
    folder.mkdir()
    return folder


def assert_person_flow(seen: dict, repo: Path) -> None:
    """What the person saw, and what git says after the merge."""
    assert seen.get("ok"), seen
    assert "both the word and the line count" in seen["question"]
    assert "both: words and lines" in seen["recommendation"]
    assert seen["tasks"] == 6
    assert "claude-haiku-4-5" in seen["anthropic_models"]
    assert "claude-haiku-4-5" in seen["task3"] and "high" in seen["task3"]
    assert seen["card_states"] == ["done", "landed", "landed", "landed", "landed", "landed"]
    assert "textstats/words.py" in seen["files"]
    assert "merged task 2" in seen["merged"]
    log = git(repo, "log", "--format=%s", "main").splitlines()
    for n, title in TASKS.items():
        assert f"Merge task {n}: {title}" in log, log
    branches = git(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/baton/").split()
    task_branches = [b for b in branches if not b.endswith("/integration")]
    assert len(task_branches) == 5
    for branch in task_branches:
        assert subprocess.run(["git", "merge-base", "--is-ancestor", branch, "main"],
                              cwd=repo).returncode == 0, branch
    assert (repo / "textstats" / "words.py").is_file()
    plan = json.loads(subprocess.run([sys.executable, "-m", "baton_tui", "plan", "--json"], cwd=repo,
                                     capture_output=True, text=True).stdout or "{}")
    three = next(t for t in plan.get("tasks", []) if t["id"] == 3)
    assert (three["model"], three["effort"]) == ("claude-haiku-4-5", "high")


def test_web_client_state(tools):
    result = subprocess.run(["node", "--test", "--test-reporter=tap", "out/unit/state.test.js"],
                            cwd=kit.EXTENSION, env=kit.node_env(tools), capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "# fail 0" in result.stdout and "# pass " in result.stdout


@pytest.mark.timeout(1200)
def test_extension_host_against_a_real_baton_serve(tools, tmp_path):
    results = tmp_path / "host.json"
    old = dict(kit.SETTINGS)
    kit.SETTINGS["baton.path"] = str(Path(sys.executable).parent / "baton")
    try:
        with kit.demo_world(tmp_path) as (repo, env):
            env["BATON_HOST_TEST_RESULTS"] = str(results)
            with kit.code_server(tools, tmp_path, repo, env,
                                 extra=("--vscode-option", "enable-smoke-test-driver")) as (port, _):
                exit_code = kit.drive(tools, "drive_host.py", {
                    "port": port, "folder": str(repo), "extension": str(kit.EXTENSION),
                    "out": str(tmp_path / "exit.json")}, timeout=1000)
    finally:
        kit.SETTINGS.clear()
        kit.SETTINGS.update(old)
    report = json.loads(results.read_text())
    assert report["failures"] == 0, json.dumps(report, indent=1)
    assert len(report["results"]) == 3 and exit_code == {"exit": 0}


@pytest.mark.timeout(1800)
def test_the_vsix_in_code_server_as_a_person(tools, tmp_path):
    """The README's build command, the package installed into code-server with nothing else:
    the bundled binary runs `baton serve --stdio`."""
    with kit.build_lock():  # it bundles into the folders the fixture builds into too
        built = subprocess.run([str(kit.ROOT / "scripts" / "build-vsix"), "--target", "linux-x64"],
                               cwd=kit.ROOT, env=kit.node_env(tools), capture_output=True,
                               text=True, timeout=1200)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    vsix = kit.ROOT / "dist" / "baton-linux-x64.vsix"
    digest = (kit.ROOT / "dist" / "baton-linux-x64.vsix.sha256").read_text().split()
    assert digest[1] == vsix.name
    with kit.demo_world(tmp_path) as (repo, env):
        with kit.code_server(tools, tmp_path, repo, env, vsix=vsix) as (port, _):
            seen = kit.drive(tools, "drive_vscode.py", {
                "url": f"http://127.0.0.1:{port}/?folder={repo}", "out": str(tmp_path / "seen.json"),
                "shots": str(shots_dir(tmp_path))}, timeout=1500)
        assert seen["opened"]
        assert seen["diff"].startswith("textstats/words.py")
        assert_person_flow(seen, repo)


@pytest.mark.timeout(1200)
def test_baton_web_in_chromium_as_a_person(tools, tmp_path):
    with kit.demo_world(tmp_path) as (repo, env):
        with kit.baton_web(repo, env) as url:
            seen = kit.drive(tools, "drive_web.py", {"url": url, "out": str(tmp_path / "seen.json"),
                                                     "shots": str(shots_dir(tmp_path))}, timeout=1000)
        assert "def count_words" in seen["diff"]
        assert_person_flow(seen, repo)


def test_the_web_client_in_the_package_is_the_built_one(tools):
    """`baton web` serves baton_tui/web/static, which the extension's build writes (the
    fixture built it just now): the committed copy is what the sources build."""
    with kit.build_lock():  # not while another worker's fixture writes it
        changed = git(kit.ROOT, "status", "--porcelain", "--", "baton_tui/web/static")
    assert changed == "", "rebuild (node editors/vscode/esbuild.mjs) and commit:\n" + changed


def assert_actions(seen: dict, repo: Path, took: str, opened: str) -> None:
    """What the run's actions did, seen in the view and in git: checkpoint yes and no, stop and
    retry, take, merge up to here, the stop at a conflict, a player joining at refresh."""
    assert seen.get("ok"), json.dumps(seen, indent=1)
    assert "codex" in seen["codex_before"] and "not signed in" in seen["codex_before"]
    assert seen["codex_disabled_before"] is True
    assert "delete the legacy exports" in seen["checkpoint_1"]
    assert "rm exports/2019.csv" in seen["checkpoint_1"]
    assert "DROP TABLE users;" in seen["checkpoint_2"]
    assert "the person said no at the checkpoint" in seen["card_2_after_no"]
    assert "stopped by you" in seen["card_3_stopped"]
    assert took in seen["took"], seen["took"]
    first, second, last = seen["merge_order"]
    assert sorted(seen["merge_order"]) == [1, 3, 5]
    assert f"up to task {second}" in seen["merge_question"], seen["merge_question"]
    assert seen["merged_up_to"].endswith(f"merged task {first}, task {second} onto your branch")
    assert f"Merge task {last}:" not in seen["main_after_up_to"]
    assert f"task {last} stopped at a conflict in " in seen["conflict"]
    assert opened in seen["opened"], seen["opened"]
    assert "not ready" not in seen["codex_after"]
    assert seen["rows_after"] == 5
    assert "codex" in seen["task_2_saved"]
    states = dict(seen["card_states"])
    assert (states[first], states[second], states[2]) == ("merged", "merged", "failed"), states
    log = git(repo, "log", "--format=%s", "main")
    assert f"Merge task {first}:" in log and f"Merge task {second}:" in log
    assert f"Merge task {last}:" not in log
    plan = json.loads(subprocess.run([sys.executable, "-m", "baton_tui", "plan", "--json"], cwd=repo,
                                     capture_output=True, text=True).stdout or "{}")
    assert next(t for t in plan["tasks"] if t["id"] == 2)["player"] == "codex"


@pytest.mark.timeout(1200)
def test_baton_web_runs_actions_as_a_person(tools, tmp_path):
    """Checkpoints yes and no, stop and retry, take (the page shows the interactive command),
    merge up to here, the conflict (the page names the file), refresh — in Chromium."""
    with kit.actions_world(tmp_path) as (repo, env, world):
        world.update({"repo": str(repo), "files": {"1": "yes.txt", "3": "retry.txt", "5": "notes.txt"}})
        with kit.baton_web(repo, env) as url:
            seen = kit.drive(tools, "drive_web.py", {"url": url, "out": str(tmp_path / "seen.json"),
                                                     "world": world}, timeout=1000)
        assert_actions(seen, repo, "take_session.py", "to resolve the conflict")


@pytest.mark.timeout(1500)
def test_vscode_runs_actions_as_a_person(tools, tmp_path):
    """The same actions in code-server (the extension loaded from editors/vscode): take opens
    an editor terminal named for the task that runs the player's interactive command, and the
    stop at a merge conflict opens the conflicting file in an editor."""
    with kit.actions_world(tmp_path) as (repo, env, world):
        world.update({"repo": str(repo), "files": {"1": "yes.txt", "3": "retry.txt", "5": "notes.txt"}})
        baton = {"baton.path": str(Path(sys.executable).parent / "baton")}
        with kit.code_server(tools, tmp_path, repo, env, settings=baton,
                             extra=("--vscode-option", "enable-smoke-test-driver")) as (port, _):
            seen = kit.drive(tools, "drive_vscode.py", {
                "url": kit.development_url(port, repo), "out": str(tmp_path / "seen.json"),
                "shots": str(tmp_path), "world": world}, timeout=1400)
        assert_actions(seen, repo, "tidy-the-exports/4-half-done", "the person's own")
        assert seen["took"].startswith("Baton: task 4") and "interactive session in" in seen["took"]
        assert seen["opened"].startswith("notes.txt")
