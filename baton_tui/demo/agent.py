"""A scripted agent program: edits files and reports through `baton report`, per its script.

It behaves like a well-mannered coding agent so the demo and the engine tests run
offline on real processes. The script is a JSON file mapping a task id (as a
string, or "*") to a list of steps:

    {"write": "path", "content": "text"}    create or replace a file (in the cwd)
    {"append": "path", "content": "text"}   append to a file
    {"delete": "path"}                      delete a file
    {"print": "text"}                       print a line of output
    {"progress": "text"}                    `baton report progress`
    {"sleep": 1.5}                          wait
    {"await": "path"}                       wait until that file exists (a test's signal)
    {"burn": 2.0}                           busy on the CPU this long, printing nothing
    {"checkpoint": "what", "evidence": "…"} `baton checkpoint` (evidence on stdin); exit 1 stops
                                            the script, 3 ends the turn (the resumed run
                                            continues after it)
    {"report": "done", "summary": "…"}      `baton report done|failed` (optional "tokens", "cost")
    {"report": "limited", "until": 1.0e9}   `baton report limited` (optional "until" or "in"
                                            seconds from now, "reason")
    {"exit": 3}                             exit with this status
    {"hang": true}                          sleep until killed

On a resumed attempt (BATON_RESUME=1) the steps after the last checkpoint (or limited
report) run.
"""

from __future__ import annotations

import json
import os
import sys
import time

# `os` alone spawns and writes: `subprocess` and `pathlib` were a third of this agent's start
# (7 of 21 ms), paid on every task of the demo, the tests and the benchmarks, before and
# after each `baton report`.


def _baton(*args: str, stdin: str | None = None) -> int:
    """`baton ARGS` found on PATH, as an agent's shell tool runs it; its exit status.
    `stdin`: text to give it (else it reads nothing)."""
    actions: list[tuple]
    if stdin is None:
        actions = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0)]
        pid = os.posix_spawnp("baton", ["baton", *args], os.environ, file_actions=actions)
    else:
        read_end, write_end = os.pipe()
        actions = [(os.POSIX_SPAWN_DUP2, read_end, 0), (os.POSIX_SPAWN_CLOSE, read_end),
                   (os.POSIX_SPAWN_CLOSE, write_end)]
        try:
            pid = os.posix_spawnp("baton", ["baton", *args], os.environ, file_actions=actions)
        finally:
            os.close(read_end)
        with open(write_end, "w", encoding="utf-8") as pipe:
            try:
                pipe.write(stdin)
            except BrokenPipeError:  # it did not read it all: its exit status says why
                pass
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def _usage(step: dict) -> list[str]:
    return [*(["--tokens", str(step["tokens"])] if "tokens" in step else []),
            *(["--cost", str(step["cost"])] if "cost" in step else [])]


def steps_for(script: dict, task: str) -> list[dict]:
    return list(script.get(task) or script.get("*") or [])


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        print("usage: python -m baton_tui.demo.agent SCRIPT.json", file=sys.stderr)
        return 2
    with open(argv[0], encoding="utf-8") as fh:
        script = json.load(fh)
    sys.stdin.read()  # the prompt; a real agent would read it
    steps = steps_for(script, os.environ.get("BATON_TASK", "*"))
    if os.environ.get("BATON_RESUME") == "1":
        marks = [i for i, s in enumerate(steps) if "checkpoint" in s
                 or s.get("report") == "limited"]
        if marks:
            steps = steps[marks[-1] + 1:]
    for step in steps:
        if "write" in step:
            path = step["write"]
            folder = os.path.dirname(path)
            if folder:
                os.makedirs(folder, exist_ok=True)
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(step.get("content", ""))
            print(f"wrote {path}", flush=True)
        elif "append" in step:
            with open(step["append"], "a", encoding="utf-8") as fh:
                fh.write(step.get("content", ""))
            print(f"appended to {step['append']}", flush=True)
        elif "delete" in step:
            try:
                os.remove(step["delete"])
            except FileNotFoundError:
                pass
        elif "print" in step:
            print(step["print"], flush=True)
        elif "progress" in step:
            _baton("report", "progress", step["progress"])
        elif "sleep" in step:
            time.sleep(float(step["sleep"]))
        elif "await" in step:
            while not os.path.exists(step["await"]):
                time.sleep(0.05)
        elif "burn" in step:
            until = time.monotonic() + float(step["burn"])
            while time.monotonic() < until:
                sum(i * i for i in range(10000))
        elif "checkpoint" in step:
            evidence = step.get("evidence")
            code = _baton("checkpoint", step["checkpoint"],
                          *(["--evidence", "-"] if evidence is not None else []), stdin=evidence)
            if code == 1:
                _baton("report", "failed", "--reason", "the person said no at the checkpoint")
                return 0
            if code == 3:
                print("checkpoint not decided yet: ending my turn", flush=True)
                return 0
        elif step.get("report") == "limited":
            reset = step.get("until") or (time.time() + step["in"] if "in" in step else None)
            _baton("report", "limited", *(["--until", str(reset)] if reset else []),
                   *(["--reason", step["reason"]] if "reason" in step else []), *_usage(step))
            return 0
        elif "report" in step:
            key = "--summary" if step["report"] == "done" else "--reason"
            _baton("report", step["report"], key, step.get("summary") or step.get("reason", ""),
                   *_usage(step))
        elif "exit" in step:
            return int(step["exit"])
        elif step.get("hang"):
            while True:
                time.sleep(1)
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # without the interpreter's teardown: its task's end waits for the exit
