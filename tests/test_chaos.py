"""The chaos suite: Baton killed inside each narrow window, and agents that misbehave.

Each kill lands exactly where it is meant to (`BATON_KILL_AT`, see baton_tui/killpoints.py,
or a wrapped git that pauses half way) — never a lucky sleep. After it the run is resumed
and the end state pinned: every task's work on the integration branch exactly once, no
worktree lost, no task run again after its report, no stale lock (helpers/chaos_kit.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from helpers.chaos_kit import (
    assert_no_leftovers, check_after_crash, git_wrapper, killed_at, start_killed,
    worktrees_dir,
)
from helpers.run_kit import (
    alive, events, git, kinds, load_plan, program, script_agent, status, task, wait_for,
    wait_idle, write_config,
)

pytestmark = pytest.mark.slow


def writes(task_id: int, *extra: dict) -> list[dict]:
    """A task's steps: write t<id>.txt holding its id, then report done."""
    return [{"write": f"t{task_id}.txt", "content": f"{task_id}\n"}, *extra,
            {"report": "done", "summary": f"task {task_id}"}]


def one_task(repo: Path, baton, tmp_path: Path, *, extra: str = "", steps: list | None = None,
             check: str | None = None) -> None:
    agent = script_agent(tmp_path, "a", {"1": steps or writes(1)})
    write_config(repo, {"agent": agent}, extra=extra)
    load_plan(baton, [task(1, **({"check": check} if check else {}))])


def resume(baton, code: int = 0) -> None:
    result = baton("resume", timeout=120)
    assert result.returncode == code, result.stdout + result.stderr


# -- kills in a narrow window ------------------------------------------------------------------

def test_kill_while_baton_holds_the_index_lock_leaves_no_lock_and_never_reruns_the_agent(
        repo, baton, tmp_path):
    one_task(repo, baton, tmp_path)
    start_killed(baton, "commit")
    assert killed_at(baton, "commit")
    locks = list(Path(git(repo, "rev-parse", "--git-common-dir")).resolve()
                 .glob("worktrees/*/index.lock"))
    assert len(locks) == 1 and locks[0].read_text().startswith("baton ")  # Baton's own
    resume(baton)
    check_after_crash(repo, baton, {1: "t1.txt"})


@pytest.mark.parametrize("how", ["", ":group"], ids=["conductor", "process-group"])
def test_kill_during_worktree_add_makes_it_again_and_gc_works_later(repo, baton, tmp_path, how):
    # The wrapped git makes the worktree, then puts it in the state git leaves half way
    # through a checkout (`locked`, files missing), says so, and waits to be killed.
    for i in range(300):
        (repo / f"f{i:03}.txt").write_text(f"{i}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "many files")
    flag = tmp_path / "half-way"
    env = git_wrapper(tmp_path / "wrap", f'''
  "$REAL" "$@" || exit $?
  for a in "$@"; do [ "$prev" = "--" ] && wt="$a"; prev="$a"; done
  admin=$(sed 's/^gitdir: //' "$wt/.git")
  echo initializing > "$admin/locked"
  rm -f "$wt"/f1*.txt
  touch "{flag}"
  sleep 30
  exit 0''')
    one_task(repo, baton, tmp_path)
    start_killed(baton, f"worktree-add{how}:when={flag}", extra_env=env)
    half = next(worktrees_dir().rglob("1-task-1"))
    marker = half.parent / "1-task-1.preparing"
    assert marker.exists() and not (half / "f100.txt").exists()
    [git_pid] = [p["pid"] for p in json.loads(marker.read_text())["procs"]]
    assert alive(git_pid) == (how == "")  # alone, the conductor leaves its git running
    resume(baton)
    st = check_after_crash(repo, baton, {1: "t1.txt"})
    assert (half / "f100.txt").read_text() == "100\n"  # made again, whole
    assert not alive(git_pid)  # the orphaned git was ended before the folder was touched
    # Later: merged and collected without a traceback.
    git(repo, "stash", "-u") if git(repo, "status", "--porcelain", "--untracked-files=no") else None
    merged = baton("handoff", "merge")
    assert merged.returncode == 0, merged.stdout + merged.stderr
    gc = baton("gc")
    assert gc.returncode == 0, gc.stdout + gc.stderr
    assert not Path(st["tasks"][0]["worktree"]).exists()
    assert_no_leftovers(repo)


def test_ref_locks_a_killed_git_left_are_cleared_and_the_run_finishes(repo, baton, tmp_path):
    # git killed inside a ref transaction leaves `<ref>.lock`: the wrapped git makes the
    # worktree, then leaves the locks a kill there would (the task branch's, the integration
    # branch's and the worktree HEAD's), and waits for the group kill. Once only.
    flag = tmp_path / "half-way"
    env = git_wrapper(tmp_path / "wrap", f'''
  [ -e "{flag}" ] && exec "$REAL" "$@"
  "$REAL" "$@" || exit $?
  for a in "$@"; do [ "$prev" = "--" ] && wt="$a"; [ "$prev" = "-b" ] && br="$a"; prev="$a"; done
  common=$("$REAL" rev-parse --git-common-dir)
  admin=$(sed 's/^gitdir: //' "$wt/.git")
  touch "$common/refs/heads/$br.lock" "$common/refs/heads/${{br%/*}}/integration.lock" \\
        "$admin/HEAD.lock"
  touch "{flag}"
  sleep 30
  exit 0''')
    one_task(repo, baton, tmp_path)
    start_killed(baton, f"worktree-add:group:when={flag}", extra_env=env)
    common = Path(git(repo, "rev-parse", "--git-common-dir")).resolve()
    left = sorted(common.glob("refs/heads/baton/*/*.lock"))
    assert [p.name for p in left] == ["1-task-1.lock", "integration.lock"], left
    # A lock on the person's own branch is theirs: never touched.
    theirs = common / "refs" / "heads" / "main.lock"
    theirs.touch()
    resume(baton)
    check_after_crash(repo, baton, {1: "t1.txt"})
    assert not any(p.exists() for p in left)
    assert theirs.exists()
    cleared = [e["data"]["detail"] for e in events(baton) if e["kind"] == "run.repaired"]
    assert any("1-task-1.lock" in d for d in cleared) and any(
        "integration.lock" in d for d in cleared), cleared


def test_a_half_made_worktree_is_discarded_and_collected_without_a_traceback(
        repo, baton, tmp_path):
    flag = tmp_path / "half-way"
    env = git_wrapper(tmp_path / "wrap", f'''
  "$REAL" "$@" || exit $?
  for a in "$@"; do [ "$prev" = "--" ] && wt="$a"; prev="$a"; done
  echo initializing > "$(sed 's/^gitdir: //' "$wt/.git")/locked"
  touch "{flag}"
  sleep 30''')
    one_task(repo, baton, tmp_path)
    start_killed(baton, f"worktree-add:group:when={flag}", extra_env=env)
    discarded = baton("discard", "1")
    assert discarded.returncode == 0, discarded.stdout + discarded.stderr
    gc = baton("gc")
    assert gc.returncode == 0 and "Traceback" not in gc.stderr, gc.stdout + gc.stderr
    assert not any(worktrees_dir().rglob("1-task-1"))
    assert_no_leftovers(repo)


@pytest.mark.parametrize("how", ["", ":group"], ids=["conductor", "process-group"])
def test_kill_during_setup_runs_setup_again_before_the_agent(repo, baton, tmp_path, how):
    log = tmp_path / "setup.log"
    flag = tmp_path / "setup-half-way"
    first = tmp_path / "first-setup"
    # The first set-up stops half way (and would sleep a minute); the next one runs through.
    setup = (f"echo start >> {log}; if [ ! -f {first} ]; then touch {first} {flag}; sleep 60; "
             f"fi; echo prepared > .prepared; echo end >> {log}")
    one_task(repo, baton, tmp_path, check="test -f .prepared",
             extra=f"\n[worktree]\nsetup = {json.dumps(setup)}\n")
    assert baton("trust").returncode == 0
    start_killed(baton, f"setup{how}:when={flag}")
    resume(baton)
    check_after_crash(repo, baton, {1: "t1.txt"})
    # The interrupted set-up was ended (its `end` never came) and ran again, whole.
    assert log.read_text().splitlines() == ["start", "start", "end"]


def test_kill_between_spawning_an_agent_and_recording_it_never_starts_a_second(
        repo, baton, tmp_path):
    runs = tmp_path / "runs.log"
    steps = [{"append": str(runs), "content": "ran\n"}, {"sleep": 1.0}, *writes(1)]
    one_task(repo, baton, tmp_path, steps=steps)
    start_killed(baton, "spawned")
    assert "task.started" not in kinds(events(baton), 1)
    resume(baton)
    check_after_crash(repo, baton, {1: "t1.txt"})
    assert runs.read_text() == "ran\n"  # one agent ever ran
    # Recorded once: adopted by the new conductor (its shim had claimed it), or started
    # afresh by it (it gave the unclaimed attempt up first, and that shim never ran).
    started = [e for e in events(baton) if e["kind"] == "task.started"]
    assert len(started) == 1, started


def test_a_started_task_whose_shim_died_before_claiming_it_runs_again_on_resume(
        repo, baton, tmp_path):
    """Killed with its process group, Baton can take a shim it just forked along (the shim
    leaves the group only as it starts): its task is recorded started, yet no agent ever
    ran. The state that leaves, made exactly: resume starts the task again, once."""
    from baton_tui.paths import find_repo
    from baton_tui.core.slug import task_branch
    from baton_tui import layout
    from baton_tui.store.db import Store

    runs = tmp_path / "runs.log"
    one_task(repo, baton, tmp_path, steps=[{"append": str(runs), "content": "ran\n"},
                                           *writes(1)])
    start_killed(baton, "event@1")  # dead before it started anything
    assert "task.started" not in kinds(events(baton), 1)
    gone = subprocess.Popen(["true"])
    gone.wait()  # a shim's pid, the shim gone
    paths = find_repo(repo)
    with Store(paths.store_path) as store:
        plan = store.current_plan()
        title = plan.doc["tasks"][0]["title"]
        start = {"workdir": str(layout.worktree_path(paths, plan.slug, 1, title)),
                 "branch": task_branch(plan.slug, 1, title), "base": git(repo, "rev-parse", "main")}
        attempt = store.new_attempt(plan.id, 1, "bnc_lost", "agent", {"cwd": start["workdir"]},
                                    str(tmp_path / "lost.log"))
        store.update_attempt(attempt, shim_pid=gone.pid)
        store.append(plan.id, 1, "task.started", {"attempt": attempt, "player": "agent", **start})
    resume(baton)
    st = status(baton)
    assert [t["state"] for t in st["tasks"]] == ["landed"], st["tasks"]
    assert git(repo, "show", f"{st['plan']['integration_branch']}:t1.txt") == "1"
    assert runs.read_text() == "ran\n"  # one agent, the new attempt's
    requeued = [e for e in events(baton) if e["kind"] == "task.queued" and e.get("task") == 1
                and "never started" in json.dumps(e)]
    assert len(requeued) == 1, requeued


def test_a_resume_whose_shim_died_before_claiming_it_is_resumed_again_not_restarted(
        repo, baton, tmp_path):
    """The same window for a resume: the task was recorded resumed (after its checkpoint's
    yes), but its shim died before claiming the attempt. `baton resume` gives the attempt
    up and makes the same resume again — the steps after the checkpoint — rather than fail
    the task or start its agent from the beginning."""
    from baton_tui.paths import find_repo
    from baton_tui.store.db import Store

    runs = tmp_path / "runs.log"
    agent = script_agent(tmp_path, "a", {"1": [
        {"append": str(runs), "content": "before\n"}, {"checkpoint": "deploy the schema"},
        {"append": str(runs), "content": "after\n"}, *writes(1)]})
    write_config(repo, {"agent": agent})
    load_plan(baton, [task(1)], approve=True)
    assert baton("run", timeout=120).returncode == 3  # waiting for the checkpoint's answer
    assert status(baton)["tasks"][0]["state"] == "checkpoint"
    gone = subprocess.Popen(["true"])
    gone.wait()  # a shim's pid, the shim gone
    with Store(find_repo(repo).store_path) as store:
        plan = store.current_plan()
        ran = store.latest_attempt(plan.id, 1)
        spec = {**ran.spec, "resumed": True, "resume_message": "The person answered your "
                "checkpoint: YES — go ahead with the step, then finish and report."}
        attempt = store.new_attempt(plan.id, 1, "bnc_lost", ran.player, spec,
                                    str(tmp_path / "lost.log"))
        store.update_attempt(attempt, shim_pid=gone.pid)
        store.append(plan.id, 1, "task.resumed", {
            "attempt": attempt, "player": ran.player, "workdir": spec["cwd"],
            "base": spec.get("base"), "branch": spec.get("branch")})
    resume(baton)
    st = status(baton)
    assert [t["state"] for t in st["tasks"]] == ["landed"], st["tasks"]
    assert git(repo, "show", f"{st['plan']['integration_branch']}:t1.txt") == "1"
    assert runs.read_text() == "before\nafter\n"  # resumed after its checkpoint, once
    again = [e for e in events(baton) if e["kind"] == "task.queued" and e.get("task") == 1
             and "never resumed" in json.dumps(e)]
    assert len(again) == 1, again


def test_an_attempt_given_up_before_its_shim_claimed_it_never_runs(tmp_path):
    from baton_tui.runners.shim import run_attempt
    from baton_tui.store.db import Store

    store = Store(tmp_path / "state" / "baton.db")
    spec = {"argv": ["touch", str(tmp_path / "ran")], "cwd": str(tmp_path)}
    attempt = store.new_attempt(1, 1, "bnc_x", "agent", spec, str(tmp_path / "a.log"))
    assert store.abandon_attempt(attempt)          # the conductor gives it up first ...
    assert run_attempt(attempt, str(store.path)) == 0
    assert not (tmp_path / "ran").exists()         # ... so its shim never runs the agent
    claimed = store.new_attempt(1, 1, "bnc_y", "agent", spec, str(tmp_path / "b.log"))
    assert store.claim_attempt(claimed, os.getpid())
    assert not store.abandon_attempt(claimed)      # claimed first: it runs, and is adopted
    assert not store.claim_attempt(claimed, os.getpid())  # and only once


def test_an_integration_branch_moved_while_the_conductor_was_down_is_put_back(
        repo, baton, tmp_path):
    """Killed before landing task 1; meanwhile something moves the integration branch to a
    commit with a conflicting t1.txt. Baton puts the branch back where its record says (issue
    28: only Baton's landings move it) and the relanding goes through."""
    agent = script_agent(tmp_path, "a", {"1": writes(1), "2": writes(2)})
    write_config(repo, {"agent": agent})
    load_plan(baton, [task(1), task(2, deps=[1])])
    start_killed(baton, "land")  # task 1 done, not landed
    integration = status(baton)["plan"]["integration_branch"]
    base = git(repo, "rev-parse", integration)
    blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=repo, input="other\n",
                          capture_output=True, text=True, check=True).stdout.strip()
    tree = subprocess.run(["git", "mktree"], cwd=repo, input=f"100644 blob {blob}\tt1.txt\n",
                          capture_output=True, text=True, check=True).stdout.strip()
    commit = git(repo, "commit-tree", tree, "-p", base, "-m", "someone else's t1.txt")
    git(repo, "update-ref", f"refs/heads/{integration}", commit)
    resume(baton, code=0)
    st = status(baton)
    assert [t["state"] for t in st["tasks"]] == ["landed", "landed"], st["tasks"]
    repaired = [e["data"] for e in events(baton) if e["kind"] == "run.repaired"]
    assert any(r["what"] == "ref" and r["commit"] == base for r in repaired), repaired
    assert subprocess.run(["git", "merge-base", "--is-ancestor", commit, integration],
                          cwd=repo).returncode == 1  # what moved it is not on the branch


def test_a_deleted_integration_branch_is_rebuilt_from_the_landings_recorded(
        repo, baton, tmp_path):
    agent = script_agent(tmp_path, "a", {"1": writes(1), "3": writes(3)})
    write_config(repo, {"agent": agent})
    load_plan(baton, [task(1), task(2, mode="manual", deps=[1]), task(3, deps=[2])])
    assert baton("run", "--approve", timeout=90).returncode == 3  # waits on the manual task
    integration = status(baton)["plan"]["integration_branch"]
    git(repo, "branch", "-D", integration)
    assert baton("done", "2").returncode == 0
    st = wait_idle(baton)
    assert [t["state"] for t in st["tasks"]] == ["landed", "done", "landed"], st["tasks"]
    assert git(repo, "show", f"{integration}:t1.txt") == "1"  # task 1's landing came back
    assert git(repo, "show", f"{integration}:t3.txt") == "3"
    assert git(repo, "show", f"{st['tasks'][2]['branch']}:t1.txt") == "1"  # cut from it
    repaired = [e for e in events(baton) if e["kind"] == "run.repaired"]
    assert len(repaired) == 1 and repaired[0]["data"]["what"] == "integration"


def test_a_deleted_integration_branch_whose_commits_are_gone_stops_with_one_line(
        repo, baton, tmp_path):
    agent = script_agent(tmp_path, "a", {"1": writes(1), "3": writes(3)})
    write_config(repo, {"agent": agent})
    load_plan(baton, [task(1), task(2, mode="manual", deps=[1]), task(3, deps=[2])])
    assert baton("run", "--approve", timeout=90).returncode == 3
    integration = status(baton)["plan"]["integration_branch"]
    git(repo, "branch", "-D", integration)
    git(repo, "reflog", "expire", "--expire=now", "--all")
    git(repo, "gc", "-q", "--prune=now")
    assert baton("done", "2").returncode == 0
    st = wait_idle(baton)
    three = st["tasks"][2]
    assert three["state"] == "failed" and "was deleted" in three["reason"], three
    assert "restore the branch" in three["reason"]
    assert git(repo, "branch", "--list", integration) == ""  # not silently made at the base


def test_handoff_after_a_conflict_retry_merges_each_task_alone(repo, baton, tmp_path):
    agent = script_agent(tmp_path, "c", {
        "1": [{"write": "shared.txt", "content": "one\n"}, *writes(1)],
        "2": [{"sleep": 1.5}, {"write": "shared.txt", "content": "two\n"}, *writes(2)],
        "3": [{"sleep": 0.5}, *writes(3)], "4": [{"sleep": 0.5}, *writes(4)]})
    fixer = script_agent(tmp_path, "f", {"*": [{"write": "shared.txt", "content": "one\ntwo\n"},
                                               {"report": "done", "summary": "resolved"}]})
    write_config(repo, {"agent": agent, "fixer": fixer}, limits={"max_parallel": 4})
    load_plan(baton, [task(1), task(2), task(3), task(4)])
    assert baton("run", "--approve", timeout=90).returncode == 1
    states = {t["id"]: t["state"] for t in status(baton)["tasks"]}
    [lost] = [t for t, state in states.items() if state == "failed"]  # 1 or 2: one conflict
    assert baton("task-player", str(lost), "fixer").returncode == 0
    assert baton("trust").returncode == 0
    assert baton("retry", str(lost)).returncode == 0
    assert [t["state"] for t in wait_idle(baton)["tasks"]] == ["landed"] * 4
    # The retried branch now carries the three others (brought in by the retry): they merge
    # before it, so each merge brings one task, and a conflict would name its own task.
    merged = baton("handoff", "merge")
    assert merged.returncode == 0, merged.stdout + merged.stderr
    order = [int(line.split()[2]) for line in merged.stdout.splitlines()
             if line.startswith("merged task")]
    assert sorted(order) == [1, 2, 3, 4] and order[-1] == lost, merged.stdout
    assert (repo / "shared.txt").read_text() == "one\ntwo\n"


# -- agents that misbehave ---------------------------------------------------------------------

@pytest.mark.parametrize("how", ["new-branch", "detach"])
def test_an_agent_that_checks_out_another_branch_still_lands_its_work(repo, baton, tmp_path, how):
    write_config(repo, {"agent": program("branch_hopper.py", how)})
    load_plan(baton, [task(1)])
    result = baton("run", "--approve", timeout=90)
    assert result.returncode == 0, result.stdout + result.stderr
    one = status(baton)["tasks"][0]
    assert one["state"] == "landed"
    integration = status(baton)["plan"]["integration_branch"]
    assert git(repo, "show", f"{integration}:committed.txt").startswith("committed")
    assert git(repo, "show", f"{integration}:loose.txt") == "left uncommitted"
    assert git(Path(one["worktree"]), "symbolic-ref", "HEAD") == f"refs/heads/{one['branch']}"
    assert any(f["kind"] == "branch" for f in one["flags"]), one["flags"]


def test_an_agent_that_deletes_its_git_fails_and_a_retry_repairs_keeping_its_files(
        repo, baton, tmp_path):
    write_config(repo, {"agent": program("git_deleter.py", str(tmp_path / "ran"))})
    load_plan(baton, [task(1)])
    assert baton("run", "--approve", timeout=90).returncode == 1
    one = status(baton)["tasks"][0]
    assert one["state"] == "failed" and ".git is gone" in one["reason"], one
    worktree = Path(one["worktree"])
    assert (worktree / "first.txt").exists()
    assert baton("retry", "1").returncode == 0
    st = wait_idle(baton)
    assert st["tasks"][0]["state"] == "landed", st["tasks"][0]
    integration = st["plan"]["integration_branch"]
    assert git(repo, "show", f"{integration}:first.txt").startswith("written before")
    assert git(repo, "show", f"{integration}:second.txt") == "written by the retry"
    assert_no_leftovers(repo)


def test_a_child_that_left_the_agents_session_does_not_outlive_the_task(repo, baton, tmp_path):
    pidfile, ticks = tmp_path / "child.pid", tmp_path / "ticks"
    write_config(repo, {"agent": program("setsid_child.py", str(pidfile), str(ticks))})
    load_plan(baton, [task(1)])
    result = baton("run", "--approve", timeout=90)
    assert result.returncode == 0, result.stdout + result.stderr
    child = int(pidfile.read_text())
    wait_for(lambda: not alive(child), timeout=10, what="the setsid child to be ended")
    size = ticks.stat().st_size
    time.sleep(0.3)
    assert ticks.stat().st_size == size  # it stopped writing
    assert status(baton)["tasks"][0]["state"] == "landed"


def test_an_agent_printing_hundreds_of_megabytes_is_kept_head_and_tail(repo, baton, tmp_path):
    megabytes = 300
    write_config(repo, {"agent": program("flood.py", str(megabytes))})
    load_plan(baton, [task(1)])
    assert baton("run", "--approve", "--detach").returncode == 0
    peak = 0
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        st = status(baton)
        if st["conductor"] is None and st["tasks"][0]["state"] not in ("queued", "running"):
            break
        if st["conductor"]:
            peak = max(peak, rss_kib(st["conductor"]["pid"]))
        time.sleep(0.2)
    st = status(baton)
    assert st["tasks"][0]["state"] == "landed", st["tasks"][0]
    assert 0 < peak < 200 * 1024, f"conductor RSS {peak} KiB"
    log = next(Path(os.environ["BATON_HOME"]).rglob("task-1/attempt-*/output.log"))
    assert log.stat().st_size < 16 << 20  # bounded, whatever the agent printed
    # Its own peak RSS, from wait4 in a small parent of its own: a process forked from this
    # test worker starts its peak at the worker's size (Linux keeps it across exec), and
    # RUSAGE_CHILDREN would be the largest of every child this worker ever waited for.
    usage_file = tmp_path / "logs.maxrss"
    proc = subprocess.Popen([sys.executable, "-c", MEASURED, str(usage_file),
                             sys.executable, "-m", "baton_tui", "logs", "1"], cwd=repo,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    with ThreadPoolExecutor(2) as pool:
        reading = pool.submit(proc.stdout.read), pool.submit(proc.stderr.read)
        out, err = (part.result(timeout=60) for part in reading)
    assert proc.wait(timeout=60) == 0, err
    usage = int(usage_file.read_text())
    assert out.startswith(b"FIRST LINE OF THE FLOOD") and b"LAST WORDS OF THE FLOOD" in out[-4096:]
    assert b"bytes of output cut here]" in out
    assert len(out) < 16 << 20
    assert usage < 200 * 1024, f"baton logs RSS {usage} KiB"


MEASURED = """
import os, sys
pid = os.posix_spawn(sys.argv[2], sys.argv[2:], os.environ)
_, ended, own = os.wait4(pid, 0)
open(sys.argv[1], "w").write(str(own.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(ended))
"""  # argv: where to write the peak RSS (KiB), then the command, run with this one's stdio


def rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def test_a_lock_an_agent_left_fails_the_task_after_its_report_and_retry_only_commits(
        repo, baton, tmp_path):
    runs = tmp_path / "runs"
    write_config(repo, {"agent": program("lock_leaver.py", str(runs))})
    load_plan(baton, [task(1)])
    assert baton("run", "--approve", timeout=90).returncode == 1
    one = status(baton)["tasks"][0]
    assert one["state"] == "failed" and "index.lock" in one["reason"], one
    for lock in Path(git(repo, "rev-parse", "--git-common-dir")).resolve().glob(
            "worktrees/*/index.lock"):
        lock.unlink()  # the person removes it, as the reason says
    assert baton("retry", "1").returncode == 0
    st = wait_idle(baton)
    assert st["tasks"][0]["state"] == "landed", st["tasks"][0]
    assert runs.read_text() == "ran\n"  # committed and landed without running the agent again
    assert git(repo, "show", f"{st['plan']['integration_branch']}:locked-work.txt")
