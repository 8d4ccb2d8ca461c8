#!/usr/bin/env python3
"""A stand-in for GitHub's `gh` (no forge is reachable from the tests): it records every
call's argv (and the body file's text) and answers the calls Baton makes as gh 2.x does.

State lives in $GH_STANDIN_DIR: `calls.jsonl` (one call a line) and `prs.json`. It refuses
flags gh does not have for that command (the same lists `gh <cmd> --help` prints), refuses
to open a pull request whose head branch is not on the remote ($GH_STANDIN_REMOTE, a bare
repository: GitHub needs the branch pushed first) or that is already open, and says it is
not signed in unless $GH_STANDIN_SIGNED_IN is 1.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

STATE = Path(os.environ["GH_STANDIN_DIR"])
FLAGS = {  # value-taking flags of each command Baton uses (gh 2.23's --help), and switches
    ("auth", "status"): ({"--hostname", "-h"}, {"--show-token", "-t"}),
    ("pr", "list"): ({"--repo", "-R", "--head", "-H", "--state", "-s", "--json", "--base",
                      "-B", "--limit", "-L"}, {"--draft", "-d"}),
    ("pr", "create"): ({"--repo", "-R", "--head", "-H", "--base", "-B", "--title", "-t",
                        "--body", "-b", "--body-file", "-F"}, {"--draft", "-d"}),
    ("pr", "edit"): ({"--repo", "-R", "--base", "-B", "--title", "-t", "--body", "-b",
                      "--body-file", "-F"}, set()),
}


def parse(command: tuple[str, str], args: list[str]) -> tuple[dict[str, str], list[str]]:
    valued, switches = FLAGS[command]
    opts: dict[str, str] = {}
    positional: list[str] = []
    it = iter(args)
    for arg in it:
        if arg in valued:
            opts[arg] = next(it)
        elif arg in switches:
            opts[arg] = "true"
        elif arg.startswith("-"):
            fail(f"unknown flag: {arg}\n\nUsage:  gh {' '.join(command)} [flags]")
        else:
            positional.append(arg)
    return opts, positional


def fail(message: str, code: int = 1) -> None:
    print(message, file=sys.stderr)
    sys.exit(code)


def load() -> list[dict]:
    path = STATE / "prs.json"
    return json.loads(path.read_text()) if path.exists() else []


def save(prs: list[dict]) -> None:
    (STATE / "prs.json").write_text(json.dumps(prs, indent=1))


def url(repo: str, number: int) -> str:
    return f"https://github.com/{repo}/pull/{number}"


def main(argv: list[str]) -> None:
    STATE.mkdir(parents=True, exist_ok=True)
    command = tuple(argv[:2])
    record: dict = {"argv": argv}
    if command not in FLAGS:
        with open(STATE / "calls.jsonl", "a") as log:
            log.write(json.dumps(record) + "\n")
        fail(f"unknown command {' '.join(argv[:2])!r} for \"gh\"")
    opts, positional = parse(command, argv[2:])  # type: ignore[arg-type]
    body_file = opts.get("--body-file") or opts.get("-F")
    if body_file:
        record["body"] = Path(body_file).read_text()
    with open(STATE / "calls.jsonl", "a") as log:
        log.write(json.dumps(record) + "\n")
    if command == ("auth", "status"):
        if os.environ.get("GH_STANDIN_SIGNED_IN") != "1":
            fail("You are not logged into any GitHub hosts. Run gh auth login to authenticate.")
        print("github.com\n  ✓ Logged in to github.com as someone", file=sys.stderr)
        return
    repo = opts.get("--repo") or opts.get("-R") or fail("no repository named")
    prs = load()
    if command == ("pr", "list"):
        head = opts.get("--head")
        found = [p for p in prs if p["repo"] == repo and p["state"] == "open"
                 and (head is None or p["head"] == head)]
        fields = (opts.get("--json") or "number").split(",")
        print(json.dumps([{f: p.get(f) for f in fields} for p in found]))
    elif command == ("pr", "create"):
        head, base = opts["--head"], opts["--base"]
        remote = os.environ["GH_STANDIN_REMOTE"]
        for branch in (head, base):
            if subprocess.run(["git", "--git-dir", remote, "rev-parse", "--verify", "-q",
                               f"refs/heads/{branch}"], capture_output=True).returncode:
                fail("pull request create failed: GraphQL: Head sha can't be blank, Base sha "
                     "can't be blank, No commits between main and x, Head ref must be a branch "
                     f"(createPullRequest) [{branch} is not on the remote]")
        same = [p for p in prs if p["repo"] == repo and p["head"] == head and p["state"] == "open"]
        if same:
            fail(f'a pull request for branch "{head}" into branch "{base}" already exists:\n'
                 + same[0]["url"])
        number = len(prs) + 1
        prs.append({"repo": repo, "number": number, "url": url(repo, number), "head": head,
                    "base": base, "title": opts["--title"], "body": record.get("body", ""),
                    "draft": "--draft" in opts, "state": "open"})
        save(prs)
        print(url(repo, number))
    elif command == ("pr", "edit"):
        [number] = positional
        pr = next((p for p in prs if p["repo"] == repo and p["number"] == int(number)), None)
        if pr is None:
            fail(f"GraphQL: Could not resolve to a PullRequest with the number of {number}.")
        pr.update(base=opts.get("--base", pr["base"]), title=opts.get("--title", pr["title"]),
                  body=record.get("body", pr["body"]))
        save(prs)
        print(pr["url"])


if __name__ == "__main__":
    main(sys.argv[1:])
