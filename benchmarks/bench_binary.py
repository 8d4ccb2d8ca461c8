"""The single-file binary's start-up cost: `baton --help`, `baton status` and `baton --version`
from the binary ÷ the same from the venv's `baton`.

A script, not a timed test. It builds a throwaway git repository with a 20-task plan, trusted
and approved (through the venv's Baton), then times each command from the binary
(`dist/baton-<os>-<arch>`, built by `scripts/build-binary`) and from the venv alternately, so
a busy machine slows both alike, and prints the ratio of the medians — with `python -c pass`
beside them as the floor of any Python start.

The binary is PyInstaller's one-folder bundle made one file (scripts/self_unpacking.py): its
first start unpacks it into a cache folder (timed apart, as "first start", each in a new
folder), every later one is a few lines of `sh` and the bundle's own start, about the same for
every command (compare `--version`, which does next to nothing). Baton's own processes — the
conductor, each attempt shim, an agent's `baton report` — run the unpacked executable itself.
`--onefile PATH` times a PyInstaller one-file build beside it (which unpacks at every start).

The venv's commands are timed with bytecode available, as an installed Baton has it (see
bench_status.py: `PYTHONDONTWRITEBYTECODE` is dropped, the bytecode kept in the run's own
cache folder, filled by untimed warm-up runs).

    python benchmarks/bench_binary.py [--binary dist/baton-linux-x86_64] [--runs N]
                                      [--onefile PATH] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLAYERS_TOML = '[players.custom.agent-a]\ncommand = ["true"]\n'


def default_binary() -> Path:
    arch = {"amd64": "x86_64", "aarch64": "arm64"}.get(platform.machine().lower(),
                                                       platform.machine().lower())
    return ROOT / "dist" / f"baton-{platform.system().lower()}-{arch}"


def venv_baton() -> list[str]:
    """The venv's `baton` command (its console script), else `python -m baton_tui`."""
    script = Path(sys.executable).parent / "baton"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "baton_tui"]


def build_repo(where: Path, env: dict[str, str]) -> Path:
    repo = where / "repo"
    repo.mkdir()
    git_env = {**env, "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "Bench",
               "GIT_AUTHOR_EMAIL": "bench@localhost", "GIT_COMMITTER_NAME": "Bench",
               "GIT_COMMITTER_EMAIL": "bench@localhost"}
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True, env=git_env)
    (repo / "README.md").write_text("# bench\n")
    (repo / "baton.toml").write_text(PLAYERS_TOML)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True, env=git_env)
    subprocess.run(["git", "commit", "-q", "-m", "initial"], cwd=repo, check=True, env=git_env)
    tasks = [{"id": i, "title": f"Task {i}", "prompt": f"Do step {i}.", "player": "agent-a",
              "depends_on": [i - 1] if i > 1 else []} for i in range(1, 21)]
    plan = where / "plan.json"
    plan.write_text(json.dumps({"version": 1, "goal": "Benchmark the binary", "tasks": tasks}))
    for args in (["trust"], ["plan", "--from", str(plan)], ["approve"]):
        subprocess.run([*venv_baton(), *args], cwd=repo, check=True, env=env,
                       capture_output=True)
    return repo


def wall(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=True, env=env)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", type=Path, default=default_binary())
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--onefile", type=Path, help="a PyInstaller --onefile build to time too")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not args.binary.is_file():
        sys.exit(f"no {args.binary}: build it with scripts/build-binary")
    rows = []
    with tempfile.TemporaryDirectory(prefix="baton-bench-") as tmp:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env.update({"BATON_HOME": str(Path(tmp) / "home"),
                    "PYTHONPYCACHEPREFIX": str(Path(tmp) / "pycache"),
                    "BATON_CACHE_DIR": str(Path(tmp) / "cache")})
        repo = build_repo(Path(tmp), env)
        first = statistics.median(  # a first start: unpack, then run
            wall([str(args.binary), "--version"], repo,
                 {**env, "BATON_CACHE_DIR": str(Path(tmp) / f"first-{i}")}) for i in range(3))
        commands = {"--help": ["--help"], "status": ["status"], "--version": ["--version"]}
        floor = [sys.executable, "-c", "pass"]
        for _ in range(2):  # warm the page cache and the bytecode cache
            for words in commands.values():
                wall([str(args.binary), *words], repo, env)
                wall([*venv_baton(), *words], repo, env)
        times: dict[str, list[float]] = {f"{side} {name}": [] for name in commands
                                         for side in ("binary", "venv")}
        times["python -c pass"] = []
        if args.onefile:
            times["onefile --version"] = []
        for _ in range(args.runs):
            for name, words in commands.items():
                times[f"binary {name}"].append(wall([str(args.binary), *words], repo, env))
                times[f"venv {name}"].append(wall([*venv_baton(), *words], repo, env))
            times["python -c pass"].append(wall(floor, repo, env))
            if args.onefile:
                times["onefile --version"].append(wall([str(args.onefile), "--version"], repo, env))
        median = {key: statistics.median(values) for key, values in times.items()}
        for name in commands:
            b, v = median[f"binary {name}"], median[f"venv {name}"]
            rows.append({"command": f"baton {name}", "binary_s": round(b, 4),
                         "venv_s": round(v, 4), "ratio": round(b / v, 2),
                         "added_s": round(b - v, 4), "runs": args.runs})
        floor_s = median["python -c pass"]
        onefile_s = median.get("onefile --version")
    if args.json:
        print(json.dumps({"binary": str(args.binary), "size_bytes": args.binary.stat().st_size,
                          "python_pass_s": round(floor_s, 4), "first_start_s": round(first, 4),
                          "onefile_version_s": onefile_s and round(onefile_s, 4),
                          "rows": rows}, indent=2))
        return 0
    size = args.binary.stat().st_size / 2**20
    print(f"{args.binary} ({size:.0f} MiB); python -c pass {floor_s * 1000:.0f} ms; first start "
          f"(unpacking) {first * 1000:.0f} ms"
          + (f"; PyInstaller one-file --version {onefile_s * 1000:.0f} ms" if onefile_s else ""))
    for r in rows:
        print(f"{r['command']:>15}: binary {r['binary_s'] * 1000:7.0f} ms, venv "
              f"{r['venv_s'] * 1000:6.0f} ms, ratio {r['ratio']:5.2f} "
              f"(+{r['added_s'] * 1000:.0f} ms)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
