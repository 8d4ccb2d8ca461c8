"""Benchmark: Baton's overhead on a five-CLI plan, against the same CLIs run by hand.

A chain of build tasks, one on each real agent CLI (Claude Code, Codex, OpenCode, Gemini CLI,
Aider — the pinned builds `.ci/run` installs), each writing one file and reporting, all against
Baton's scripted model server on 127.0.0.1 with the same scripted turns. Baton's per-task time
is (last landing − conductor start) ÷ N: worktree, attempt shim, the CLI with Baton's per-run
settings (its MCP server, profiles), the report, commit and landing.

By hand is what a person would type for each task in turn: `git worktree add -b`, the CLI's
plain headless command on the same prompt in that worktree (`claude -p …`, `codex exec …`,
`opencode run`, `gemini -p …`, `aider --message …`), `git add -A`, `git commit`, and landing
with `git merge-tree --write-tree` / `commit-tree` / `update-ref`. The model's turns are the
same (the `baton report` a CLI runs by hand answers at once, outside a task). The figure is
Baton ÷ by hand per task (the per-task overhead target is ≤ 1.5), with each CLI's own times.
Run: ``python benchmarks/bench_real_clis.py [--rounds N]``. Not a test; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
ORDER = ("claude-code", "codex", "opencode", "gemini", "aider")


def isolate(base: Path) -> None:
    """A throwaway HOME for this process and everything it starts (the profiles write there)."""
    home = base / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = Bench\n\temail = bench@example.com\n"
                                     "[init]\n\tdefaultBranch = main\n")
    os.environ.update({"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
                       "XDG_DATA_HOME": str(home / ".local" / "share"),
                       "BATON_HOME": str(base / "baton-home"),
                       "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"), "GIT_CONFIG_NOSYSTEM": "1"})
    for var in ("BATON_PLANNER", "BATON_AUTONOMY", "BATON_MAX_PARALLEL", "BATON_CONFIG",
                "BATON_TASK", "BATON_ATTEMPT", "BATON_NONCE", "BATON_STATE"):
        os.environ.pop(var, None)


def new_repo(base: Path, name: str) -> Path:
    repo = base / name
    repo.mkdir()
    (repo / "README.md").write_text("# sample\n")
    for argv in (["git", "init", "-q", "-b", "main"], ["git", "add", "-A"],
                 ["git", "commit", "-q", "-m", "initial"]):
        subprocess.run(argv, cwd=repo, check=True, capture_output=True)
    return repo


def turns(players: dict, worktrees: list[Path]) -> list[dict]:
    """Each task: write t<N>.txt with the CLI's own tool, report, end the turn."""
    out: list[dict] = []
    for n, (name, wt) in enumerate(zip(ORDER, worktrees), 1):
        player = players[name]
        write = player.write(wt / f"t{n}.txt", f"task {n}\n")
        report = player.report("done", f"task {n}") if name == "aider" else \
            player.shell(f'baton report done --summary "task {n}"')
        out += player.conversation(write, report, {"text": "Done."})
    return out


def by_hand_argv(name: str, exe: str, prompt: str) -> tuple[list[str], bool]:
    """The plain headless command a person would run (argv, prompt on stdin?)."""
    return {
        "claude-code": ([exe, "-p", "--output-format", "stream-json", "--verbose",
                         "--dangerously-skip-permissions", "--", prompt], False),
        "codex": ([exe, "exec", "--json", "--skip-git-repo-check",
                   "--dangerously-bypass-approvals-and-sandbox", "--", prompt], False),
        "opencode": ([exe, "run", "--format", "json"], True),
        "gemini": ([exe, "-p", prompt, "-o", "stream-json", "--yolo", "--skip-trust"], False),
        "aider": ([exe, "--message", prompt, "--yes-always", "--no-pretty", "--no-auto-commits",
                   "--no-check-update", "--no-analytics", "--no-show-model-warnings"], False),
    }[name]


def run_by_hand(base: Path, server, players: dict, env: dict) -> dict[str, float]:
    repo = new_repo(base, "repo-hand")

    def git(*args: str, cwd: Path = repo) -> str:
        return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True,
                              text=True).stdout.strip()

    shim = base / "hand-bin"   # the same `baton` an agent finds under Baton (answers 2 here)
    shim.mkdir()
    (shim / "baton").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m baton_tui "$@"\n')
    (shim / "baton").chmod(0o755)
    agent_env = {**env, "PATH": f"{shim}{os.pathsep}{env['PATH']}"}
    if os.geteuid() == 0:
        agent_env["IS_SANDBOX"] = "1"
    worktrees = [base / "hand-worktrees" / f"{n}-task" for n in range(1, len(ORDER) + 1)]
    server.add_turns(turns(players, worktrees))
    integration = "refs/heads/integration"
    git("update-ref", integration, git("rev-parse", "HEAD"))
    times: dict[str, float] = {}
    for n, (name, path) in enumerate(zip(ORDER, worktrees), 1):
        started = time.monotonic()
        onto = git("rev-parse", integration)
        git("worktree", "add", "-q", "-b", f"task/{n}", str(path), onto)
        prompt = f"Create t{n}.txt containing 'task {n}', then report done."
        argv, on_stdin = by_hand_argv(name, str(players[name].require()), prompt)
        subprocess.run(argv, cwd=path, env={**agent_env, "PWD": str(path)},
                       input=prompt if on_stdin else None,
                       stdin=None if on_stdin else subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=300)
        if not (path / f"t{n}.txt").exists():
            sys.exit(f"by hand: {name} wrote nothing")
        git("add", "-A", "--", ".", ":(exclude).aider*", cwd=path)
        git("commit", "-q", "--no-verify", "-m", f"Task {n}", cwd=path)
        tree = git("merge-tree", "--write-tree", onto, f"refs/heads/task/{n}").splitlines()[0]
        commit = git("commit-tree", tree, "-p", onto, "-p", f"refs/heads/task/{n}", "-m",
                     f"Land task {n}")
        git("update-ref", integration, commit, onto)
        times[name] = time.monotonic() - started
    return times


def run_baton(base: Path, server, players: dict, env: dict) -> tuple[float, dict[str, float]]:
    repo = new_repo(base, "repo-baton")
    baton = [sys.executable, "-m", "baton_tui"]

    def run(*argv: str) -> subprocess.CompletedProcess:
        done = subprocess.run([*baton, *argv], cwd=repo, env=env, capture_output=True,
                              text=True, timeout=900)
        if done.returncode != 0:
            sys.exit(f"baton {' '.join(argv)} exited {done.returncode}:\n{done.stdout}"
                     f"{done.stderr}")
        return done

    tasks = [{"id": n, "title": f"Task {n}", "player": name, "mode": "build",
              "prompt": f"Create t{n}.txt containing 'task {n}', then report done.",
              "depends_on": [n - 1] if n > 1 else []} for n, name in enumerate(ORDER, 1)]
    (base / "plan.json").write_text(json.dumps({"version": 1, "goal": "bench", "tasks": tasks}))
    run("plan", "--from", str(base / "plan.json"))
    run("approve")
    from baton_tui.paths import find_repo
    from baton_tui import layout

    slug = json.loads(run("status", "--json").stdout)["plan"]["slug"]
    worktrees = [layout.worktree_path(find_repo(repo), slug, t["id"], t["title"]) for t in tasks]
    server.add_turns(turns(players, worktrees))
    run("run")
    events = [json.loads(line) for line in run("log", "--json").stdout.splitlines()]
    t0 = next(e["ts"] for e in events if e["kind"] == "conductor.started")
    first: dict[tuple[int, str], float] = {}
    for e in events:
        if e.get("task"):
            first.setdefault((e["task"], e["kind"]), e["ts"])
    landed = [first[(n, "task.landed")] for n in range(1, len(ORDER) + 1)]
    prev = [t0] + landed[:-1]
    per_cli = {name: landed[n - 1] - prev[n - 1] for n, name in enumerate(ORDER, 1)}
    return (landed[-1] - t0) / len(ORDER), per_cli


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    from baton_tui.demo.server import ScriptedServer
    from helpers.real_cli_kit import NPM_BIN, PYPI_BIN
    from helpers.real_players import PLAYERS

    players = {p.name: p for p in PLAYERS if p.name in ORDER}
    missing = [p.cli.binary for p in players.values() if not (p.cli.bin_dir / p.cli.binary).exists()]
    if missing:
        sys.exit(f"missing CLIs: {', '.join(missing)} (install them with `bash .ci/run`)")
    hand_rounds, baton_rounds = [], []
    for _ in range(args.rounds):
        base = Path(tempfile.mkdtemp(prefix="baton-bench-clis-"))
        try:
            isolate(base)
            with ScriptedServer([]) as server:
                env: dict[str, str] = dict(os.environ)
                for player in players.values():
                    env.update(player.env(server))
                env["PATH"] = f"{NPM_BIN}{os.pathsep}{PYPI_BIN}{os.pathsep}{os.environ['PATH']}"
                # Alternate which goes first: a busy machine's load drifts within a round.
                if len(hand_rounds) % 2 == 0:
                    hand_rounds.append(run_by_hand(base, server, players, env))
                    baton_rounds.append(run_baton(base, server, players, env))
                else:
                    baton_rounds.append(run_baton(base, server, players, env))
                    hand_rounds.append(run_by_hand(base, server, players, env))
            print(f"round {len(hand_rounds)}: ratio "
                  f"{baton_rounds[-1][0] / statistics.mean(hand_rounds[-1].values()):.2f}",
                  flush=True)
        finally:
            shutil.rmtree(base, ignore_errors=True)
    hand = {name: statistics.median(r[name] for r in hand_rounds) for name in ORDER}
    per_cli = {name: statistics.median(r[1][name] for r in baton_rounds) for name in ORDER}
    per_task = statistics.median(r[0] for r in baton_rounds)
    plain = statistics.mean(hand.values())
    print(f"{len(ORDER)} build tasks in a chain, one per CLI, {args.rounds} round(s), medians")
    print(f"{'CLI':<12} {'by hand':>9} {'Baton':>9} {'ratio':>7}")
    for name in ORDER:
        print(f"{name:<12} {hand[name]:8.2f}s {per_cli[name]:8.2f}s {per_cli[name] / hand[name]:7.2f}")
    print(f"per task: by hand {plain:.2f}s, Baton {per_task:.2f}s")
    print(f"ratio: {per_task / plain:.2f}   (target <= 1.5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
