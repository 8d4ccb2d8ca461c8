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

Against `python -c pass` (the venv's interpreter, timed in the same rounds) it reports three
ratios for `baton --version`: warm (everything in the page cache), cold cache (the program's
own files dropped from the page cache before each run with `posix_fadvise(DONTNEED)`: the one
file and its unpacked folder; the interpreter, its shared library and the modules `python -c
pass` loads) and first start (unpacking included), each in wall time and in CPU time (which
a busy machine inflates less). Where `strace` is installed, it also counts the processes each
one starts (`execve`) and the files it opens.

The venv's commands are timed with bytecode available, as an installed Baton has it (see
bench_status.py: `PYTHONDONTWRITEBYTECODE` is dropped, the bytecode kept in the run's own
cache folder, filled by untimed warm-up runs).

    python benchmarks/bench_binary.py [--binary dist/baton-linux-x86_64] [--runs N]
                                      [--onefile PATH] [--json]

The issue's targets: warm ≤ 3 × `python -c pass`, first start ≤ 1 s.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
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


def drop_from_page_cache(paths: list[Path]) -> None:
    """Ask the kernel to forget the files' cached pages (a folder: every file under it)."""
    for path in paths:
        files = [f for f in path.rglob("*") if f.is_file()] if path.is_dir() else [path]
        for file in files:
            try:
                fd = os.open(file, os.O_RDONLY)
            except OSError:
                continue
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


FLOOR_FILES = """import sys
files = {m.__file__ for m in list(sys.modules.values()) if getattr(m, '__file__', None)}
files |= {m.__cached__ for m in list(sys.modules.values()) if getattr(m, '__cached__', None)}
with open('/proc/self/maps') as maps:
    files |= {line.split()[-1] for line in maps if '/python' in line or 'libpython' in line}
print('\\n'.join(sorted(files)))
"""


def floor_files(floor: list[str], env: dict[str, str]) -> list[Path]:
    """The files `python -c pass` reads: the interpreter, its library, its start-up modules."""
    out = subprocess.run([floor[0], "-c", FLOOR_FILES], capture_output=True, text=True,
                         env=env, check=True).stdout
    return [Path(line) for line in out.splitlines() if line.startswith("/")]


def unpacked_folder(binary: Path, cache: Path) -> Path:
    """The folder the one file runs from (its `id=` line names the link in the cache)."""
    head = binary.read_bytes()[:4096].decode(errors="replace")
    ident = next(line[3:] for line in head.splitlines() if line.startswith("id="))
    return (cache / ident).resolve()


def syscalls(argv: list[str], cwd: Path, env: dict[str, str]) -> dict[str, int] | None:
    """Processes started and files opened by one run, from `strace -f`; None without strace."""
    strace = shutil.which("strace")
    if strace is None:
        return None
    with tempfile.NamedTemporaryFile("r", suffix=".strace") as log:
        subprocess.run([strace, "-f", "-qq", "-e", "trace=execve,open,openat", "-o", log.name,
                        *argv], cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=True)
        lines = [line for line in log.read().splitlines() if "= -1 " not in line]
    return {"execs": sum("execve(" in line for line in lines),
            "opens": sum("open" in line and "execve(" not in line for line in lines)}


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """The run's wall time and its CPU time (user and system, the process and its children):
    on a busy machine the second says what the run itself costs."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise subprocess.CalledProcessError(proc.returncode, argv)
    return elapsed, usage.ru_utime + usage.ru_stime


def wall(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    return timed(argv, cwd, env)[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", type=Path, default=default_binary())
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--onefile", type=Path, help="a PyInstaller --onefile build to time too")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not args.binary.is_file():
        sys.exit(f"no {args.binary}: build it with scripts/build-binary")
    binary = args.binary.resolve()
    load_before = os.getloadavg()[0]
    rows = []
    with tempfile.TemporaryDirectory(prefix="baton-bench-") as tmp:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env.update({"BATON_HOME": str(Path(tmp) / "home"),
                    "PYTHONPYCACHEPREFIX": str(Path(tmp) / "pycache"),
                    "BATON_CACHE_DIR": str(Path(tmp) / "cache")})
        repo = build_repo(Path(tmp), env)
        version = [str(binary), "--version"]
        floor = [sys.executable, "-c", "pass"]
        cpu: dict[str, list[float]] = {"first": [], "warm": [], "cold": [], "floor": [],
                                        "cold floor": []}

        def sample(kind: str, argv: list[str], run_env: dict[str, str]) -> float:
            elapsed, used = timed(argv, repo, run_env)
            cpu[kind].append(used)
            return elapsed

        firsts = []  # a first start: unpack, then run; each in a new cache folder
        for i in range(3):
            firsts.append(sample("first", version,
                                 {**env, "BATON_CACHE_DIR": str(Path(tmp) / f"first-{i}")}))
            wall(floor, repo, env)
        commands = {"--help": ["--help"], "status": ["status"], "--version": ["--version"]}
        for _ in range(2):  # warm the page cache and the bytecode cache
            for words in commands.values():
                wall([str(binary), *words], repo, env)
                wall([*venv_baton(), *words], repo, env)
        binary_files = [binary, unpacked_folder(binary, Path(env["BATON_CACHE_DIR"]))]
        python_files = floor_files(floor, env)
        times: dict[str, list[float]] = {f"{side} {name}": [] for name in commands
                                         for side in ("binary", "venv")}
        times.update({"python -c pass": [], "cold binary --version": [],
                      "cold python -c pass": []})
        if args.onefile:
            times["onefile --version"] = []
        for _ in range(args.runs):
            for name, words in commands.items():
                times[f"binary {name}"].append(wall([str(binary), *words], repo, env))
                times[f"venv {name}"].append(wall([*venv_baton(), *words], repo, env))
            times["python -c pass"].append(sample("floor", floor, env))
            sample("warm", version, env)
            drop_from_page_cache(binary_files)
            times["cold binary --version"].append(sample("cold", version, env))
            drop_from_page_cache(python_files)
            times["cold python -c pass"].append(sample("cold floor", floor, env))
            if args.onefile:
                times["onefile --version"].append(wall([str(args.onefile), "--version"], repo, env))
        median = {key: statistics.median(values) for key, values in times.items()}
        for name in commands:
            b, v = median[f"binary {name}"], median[f"venv {name}"]
            rows.append({"command": f"baton {name}", "binary_s": round(b, 4),
                         "venv_s": round(v, 4), "ratio": round(b / v, 2),
                         "added_s": round(b - v, 4), "runs": args.runs})
        floor_s, first = median["python -c pass"], statistics.median(firsts)
        starts = {"warm": (median["binary --version"], floor_s),
                  "cold_cache": (median["cold binary --version"], median["cold python -c pass"]),
                  "first_start": (first, floor_s)}
        cpu_s = {kind: statistics.median(values) for kind, values in cpu.items()}
        cpu_pairs = {"warm": ("warm", "floor"), "cold_cache": ("cold", "cold floor"),
                     "first_start": ("first", "floor")}
        ratios = {kind: {"binary_s": round(b, 4), "python_pass_s": round(f, 4),
                         "ratio": round(b / f, 1),
                         "binary_cpu_s": round(cpu_s[cpu_pairs[kind][0]], 4),
                         "python_pass_cpu_s": round(cpu_s[cpu_pairs[kind][1]], 4),
                         "cpu_ratio": round(cpu_s[cpu_pairs[kind][0]]
                                            / cpu_s[cpu_pairs[kind][1]], 1)}
                  for kind, (b, f) in starts.items()}
        load = os.getloadavg()[0]
        counts = {"binary --version": syscalls(version, repo, env),
                  "python -c pass": syscalls(floor, repo, env)}
        onefile_s = median.get("onefile --version")
    if args.json:
        print(json.dumps({"binary": str(args.binary), "size_bytes": args.binary.stat().st_size,
                          "python_pass_s": round(floor_s, 4), "first_start_s": round(first, 4),
                          "onefile_version_s": onefile_s and round(onefile_s, 4),
                          "starts": ratios, "syscalls": counts, "load_average": load,
                          "load_average_before": load_before,
                          "rows": rows}, indent=2))
        return 0
    size = args.binary.stat().st_size / 2**20
    print(f"{args.binary} ({size:.0f} MiB); python -c pass {floor_s * 1000:.0f} ms"
          + (f"; PyInstaller one-file --version {onefile_s * 1000:.0f} ms" if onefile_s else ""))
    print(f"load average at the start: {load_before:.1f}, at the end: {load:.1f}")
    for kind, r in ratios.items():
        print(f"{kind:>15}: binary --version {r['binary_s'] * 1000:5.0f} ms ÷ python -c pass "
              f"{r['python_pass_s'] * 1000:4.0f} ms = {r['ratio']:4.1f}× (CPU "
              f"{r['binary_cpu_s'] * 1000:.0f} ÷ {r['python_pass_cpu_s'] * 1000:.0f} ms = "
              f"{r['cpu_ratio']:.1f}×)")
    for what, count in counts.items():
        if count:
            print(f"{what:>20}: {count['execs']} execs, {count['opens']} files opened")
    for r in rows:
        print(f"{r['command']:>15}: binary {r['binary_s'] * 1000:7.0f} ms, venv "
              f"{r['venv_s'] * 1000:6.0f} ms, ratio {r['ratio']:5.2f} "
              f"(+{r['added_s'] * 1000:.0f} ms)", flush=True)
    return 0

if __name__ == "__main__":
    sys.exit(main())
