"""`baton demo`: a sample repository, a six-task plan, a full run, a handoff — offline.

The tasks run on the native `anthropic` player (Baton's own agent loop on the official SDK)
whose model is the scripted model server, started here on 127.0.0.1: `ANTHROPIC_BASE_URL`
and a dummy `ANTHROPIC_API_KEY` are set for the demo's own processes only, and restored after.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from argparse import Namespace
from pathlib import Path

from baton_tui import api
from baton_tui.commands.kept_demo import mark_kept
from baton_tui.core.errors import BatonError
from baton_tui.demo.sample import start_model_server, write_sample
from baton_tui.demo.session import demo_model


def _step(text: str) -> None:
    print(f"\n━━ {text}", flush=True)


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "Baton demo", "GIT_AUTHOR_EMAIL": "demo@localhost",
           "GIT_COMMITTER_NAME": "Baton demo", "GIT_COMMITTER_EMAIL": "demo@localhost"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True,
                          text=True).stdout


def _folder(given: str | None) -> Path:
    """The demo's folder: `--dir` (made if need be), else a new temporary one."""
    if not given:
        return Path(tempfile.mkdtemp(prefix="baton-demo-"))
    base = Path(given).resolve()
    if base.exists() and not base.is_dir():
        raise BatonError(f"--dir {given}: that is a file, not a folder: name a folder for the "
                         "demo (it is made if need be)")
    try:
        base.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BatonError(f"--dir {given}: cannot make that folder: "
                         f"{exc.strerror or exc}") from None
    return base


def cmd_demo(args: Namespace) -> int:
    if getattr(args, "tui", False):
        return _demo_tui(args)
    if not api.git_supports_worktrees():
        raise BatonError("the demo needs git 2.38 or newer (it shows worktrees and landing)")
    base = _folder(args.dir)
    repo = base / "textstats"
    if repo.exists():
        raise BatonError(f"{repo} already exists: pick another --dir")
    repo.mkdir()
    previous = Path.cwd()
    try:  # the demo's worktrees are kept beside it, on its own home
        with demo_model(base / "baton-home", start_model_server):
            return _headless(args, repo)
    finally:
        os.chdir(previous)
        if not (args.keep or args.dir):
            subprocess.run(["git", "worktree", "prune"], cwd=repo, capture_output=True)
            shutil.rmtree(base, ignore_errors=True)
            print(f"the sample at {repo} was removed — `baton demo --keep` (or --dir DIR) "
                  "keeps it to look at")


def _headless(args: Namespace, repo: Path) -> int:
    """Sample, plan, run, review and merge, each step through the CLI as a person types it."""
    main = args.baton
    started = time.monotonic()
    _step(f"A sample repository at {repo}")
    plan_path = write_sample(repo)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "textstats: reading text")
    os.chdir(repo)
    _step("The plan (nothing builds until it is approved)")
    for argv in (["plan", "--from", str(plan_path)], ["plan"], ["trust"]):
        if main(argv) != 0:
            return 1
    _step("Approve and run: independent tasks side by side, each in its own worktree")
    code = main(["run", "--approve"])
    if code != 0:
        print(f"\nthe run ended with exit status {code}")
        return code
    _step("Handoff: the combined diff of the landed tasks")
    main(["handoff", "review", "--stat"])
    _step("Merge the task branches onto main, in plan order")
    code = main(["handoff", "merge"])
    if code != 0:
        return code
    print(_git(repo, "log", "--oneline", "--first-parent", "-8"))
    check = subprocess.run(["python3", "-m", "unittest", "-q"], cwd=repo, capture_output=True,
                           text=True)
    print(f"tests on main after the merge: {'pass' if check.returncode == 0 else 'FAIL'}")
    print(f"\ndemo finished in {time.monotonic() - started:.1f}s"
          + (f" — the sample is kept at {repo}" if args.keep or args.dir else ""))
    return 0 if check.returncode == 0 else 1


def _demo_tui(args: Namespace) -> int:
    """`baton demo --tui`: the full app on the sample repository, with the scripted planner
    and players (the native `anthropic` route on the scripted model server) — no key, offline.
    Type any goal, answer the question, edit the plan, approve, run, and hand it off.

    The demo's run lives on its own home (`DIR/baton-home`) and its own model server, which
    stops when the app quits: a run left mid-way is paused, and `baton demo --tui --dir DIR`
    opens that sample again, with both, and continues it (so does a plain `baton resume` in
    the sample, which hosts the same two while it runs: `commands/kept_demo.py`)."""
    if not api.git_supports_worktrees():
        raise BatonError("the demo needs git 2.38 or newer (it shows worktrees and landing)")
    base = _folder(args.dir)
    repo, home = base / "textstats", base / "baton-home"
    again = repo.exists()
    if again and not (home.is_dir() and (repo / ".git").exists()):
        raise BatonError(f"{repo} already exists and is not a kept demo: pick another --dir")
    kept = bool(args.keep or args.dir)
    previous = Path.cwd()
    try:
        with demo_model(home):
            return _open_sample(args, base, again, kept)
    finally:
        os.chdir(previous)
        if not kept:
            subprocess.run(["git", "worktree", "prune"], cwd=repo, capture_output=True)
            shutil.rmtree(base, ignore_errors=True)


def _open_sample(args: Namespace, base: Path, again: bool, kept: bool) -> int:
    """Make the sample (or continue a kept one's paused run), open the app, and on the way
    out pause what the app leaves running and say how to go on."""
    from baton_tui.tui.launch import run_app  # lazy: textual, for `demo --tui` only

    main = args.baton
    repo, home = base / "textstats", base / "baton-home"
    if not again:
        write_sample(repo)
        _git(repo, "init", "-q", "-b", "main")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", "textstats: reading text")
    os.chdir(repo)
    if not again and main(["trust"]) != 0:
        return 1
    if not again:
        mark_kept(repo, home, base)
    if again and _paused(repo):
        print(f"continuing the paused run of the sample at {repo}", flush=True)
        ws = api.open_workspace(repo)
        try:
            api.resume_run(ws)
        finally:
            ws.close()
    code = run_app(leaving="The demo's scripted model stops with the app, so quitting "
                   "pauses them; " + (f"`baton demo --tui --dir {base}` continues the run."
                                      if kept else "the sample is removed with it."))
    paused = _pause(repo)
    if paused and kept:
        print(f"the run is paused, not finished: the demo's scripted model stops with the "
              f"app. `baton demo --tui --dir {base}` (or `baton resume` in {repo}) continues "
              "it")
    elif paused:
        print("the run was paused and the sample removed: `baton demo --tui --dir DIR` "
              "keeps a sample you can come back to")
    else:
        print(f"the sample is kept at {repo}" if kept else "demo finished")
    return code


def _pause(repo: Path) -> bool:
    """Pause the run the app leaves behind (its model stops with the demo): True if one was
    going."""
    ws = api.open_workspace(repo)
    try:
        pid = api.snapshot(ws.store).conductor_pid
        if not pid:
            return False
        api.pause_run(ws)
        # Its agents stop in their sessions while the model still answers; a conductor that
        # does not go within the minute is left to `baton resume`'s reconciling.
        api.wait_conductor(pid, 60.0)
        return True
    finally:
        ws.close()


def _paused(repo: Path) -> bool:
    """The kept sample has a run that stopped mid-way (paused, or cut off)."""
    ws = api.open_workspace(repo)
    try:
        snap = api.snapshot(ws.store)
        return any(t.state in (api.State.PAUSED, api.State.RUNNING, api.State.QUEUED)
                   for t in snap.tasks) and snap.conductor_pid is None
    finally:
        ws.close()
