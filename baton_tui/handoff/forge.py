"""The forge a remote lives on, driven through its own CLI: `gh` for GitHub, `glab` for GitLab.

Baton holds no forge token and speaks no forge API: the person's CLI, signed in as they are,
opens and updates the pull requests (GitLab: merge requests). Which forge is chosen from the
remote's host, or from `[handoff] forge`. Every call is an argv list (titles and bodies are
plan text); a body goes in a file (`--body-file`) where the CLI takes one.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from baton_tui.core.errors import BatonError

FORGES = {"github": "gh", "gitlab": "glab"}
HOW = {"gh": "install GitHub's CLI (`apt install gh`, or https://cli.github.com)",
       "glab": "install GitLab's CLI (https://gitlab.com/gitlab-org/cli)"}
CALL_TIMEOUT = 120


@dataclass
class Where:
    """A remote's host and repository path (`owner/name`), when its URL names them."""

    host: str | None
    path: str | None


def where(url: str) -> Where:
    """`https://host/owner/name.git`, `ssh://git@host:22/owner/name`, `git@host:owner/name`;
    a path on disk names neither."""
    found = (re.match(r"^[a-z][a-z0-9+.-]*://(?:[^@/]+@)?([^/:]+)(?::\d+)?/(.+)$", url)
             or re.match(r"^(?:[^@/]+@)?([^/:]+):(?!/)(.+)$", url))
    if not found:
        return Where(None, None)
    path = found.group(2).strip("/")
    path = path[:-4] if path.endswith(".git") else path
    return Where(found.group(1).lower(), path or None)


@dataclass
class PullRequest:
    number: int
    url: str


class Forge:
    """One forge's CLI: check it, find, open and update a pull request."""

    def __init__(self, name: str, at: Where, cwd: Path):
        self.name, self.cli, self.at, self.cwd = name, FORGES[name], at, cwd

    @property
    def repo_args(self) -> list[str]:
        """The repository the calls name (`--repo`), so the CLI never guesses it."""
        if not self.at.path:
            return []
        if self.cli == "gh":
            host = self.at.host or "github.com"
            return ["--repo", self.at.path if host == "github.com" else f"{host}/{self.at.path}"]
        return ["--repo", f"https://{self.at.host or 'gitlab.com'}/{self.at.path}"]

    def check(self) -> None:
        """Installed and signed in, else BatonError (code 2) saying which and how."""
        if shutil.which(self.cli) is None:
            raise BatonError(f"{self.cli} is not installed, and Baton opens {self.name} pull "
                             f"requests through it: {HOW[self.cli]}, then `{self.cli} auth "
                             "login` — nothing was pushed", code=2)
        argv = [self.cli, "auth", "status"]
        if self.at.host:
            argv += ["--hostname", self.at.host]
        proc = self._run(argv, check=False)
        if proc.returncode != 0:
            host = f" to {self.at.host}" if self.at.host else ""
            raise BatonError(f"{self.cli} is not signed in{host}: run `{self.cli} auth login"
                             + (f" --hostname {self.at.host}" if self.at.host else "")
                             + "` — nothing was pushed", code=2)

    # ---------------------------------------------------------------- the calls, as argv
    def find_argv(self, branch: str) -> list[str]:
        if self.cli == "gh":
            return ["gh", "pr", "list", *self.repo_args, "--head", branch, "--state", "open",
                    "--json", "number,url"]
        return ["glab", "mr", "list", *self.repo_args, "--source-branch", branch,
                "--output", "json"]

    def create_argv(self, branch: str, base: str, title: str, body: Path, body_text: str,
                    draft: bool) -> list[str]:
        if self.cli == "gh":
            return ["gh", "pr", "create", *self.repo_args, "--head", branch, "--base", base,
                    "--title", title, "--body-file", str(body), *(["--draft"] if draft else [])]
        return ["glab", "mr", "create", *self.repo_args, "--source-branch", branch,
                "--target-branch", base, "--title", title, "--description", body_text,
                "--yes", *(["--draft"] if draft else [])]

    def update_argv(self, number: int, base: str, title: str, body: Path,
                    body_text: str) -> list[str]:
        if self.cli == "gh":
            return ["gh", "pr", "edit", str(number), *self.repo_args, "--base", base,
                    "--title", title, "--body-file", str(body)]
        return ["glab", "mr", "update", str(number), *self.repo_args, "--target-branch", base,
                "--title", title, "--description", body_text]

    # ---------------------------------------------------------------- running them
    def find(self, branch: str) -> PullRequest | None:
        """The open pull request from `branch`, if one is open (opened by an earlier run)."""
        out = self._run(self.find_argv(branch)).stdout
        try:
            found = json.loads(out or "[]")
        except ValueError:
            raise BatonError(f"{self.cli} answered something that is not JSON when asked "
                             f"for the pull request of {branch}: {out.strip()[:200]}",
                             code=1) from None
        for item in found if isinstance(found, list) else []:
            number = item.get("number", item.get("iid"))
            url = item.get("url", item.get("web_url"))
            if isinstance(number, int) and isinstance(url, str):
                return PullRequest(number, url)
        return None

    def open(self, argv: list[str]) -> PullRequest:
        """Run a create or an update call; its answer names the pull request's URL."""
        out = self._run(argv).stdout
        found = re.findall(r"https?://\S+/(?:pull|merge_requests)/(\d+)", out)
        urls = re.findall(r"https?://\S+/(?:pull|merge_requests)/\d+", out)
        if not found:
            raise BatonError(f"{self.cli} did not say which pull request it opened: "
                             f"{out.strip()[:200] or '(no output)'}", code=1)
        return PullRequest(int(found[-1]), urls[-1])

    def _run(self, argv: list[str], check: bool = True) -> subprocess.CompletedProcess[str]:
        try:
            proc = subprocess.run(argv, cwd=self.cwd, capture_output=True, text=True,
                                  stdin=subprocess.DEVNULL, timeout=CALL_TIMEOUT)
        except FileNotFoundError:
            raise BatonError(f"{self.cli} is not installed: {HOW[self.cli]}", code=2) from None
        except subprocess.TimeoutExpired:
            raise BatonError(f"`{' '.join(argv[:3])}` did not answer in {CALL_TIMEOUT}s",
                             code=1) from None
        if check and proc.returncode != 0:
            said = (proc.stderr.strip() or proc.stdout.strip() or "(no output)").splitlines()
            raise BatonError(f"`{' '.join(argv[:3])}` failed: {said[-1]}", code=1)
        return proc


def choose(url: str, configured: str | None, cwd: Path) -> Forge:
    """The forge of a remote: `[handoff] forge` when set, else its host's name."""
    at = where(url)
    if configured:
        return Forge(configured, at, cwd)
    host = at.host or ""
    for name in FORGES:
        if name in host:
            return Forge(name, at, cwd)
    raise BatonError(f"cannot tell which forge {url} is on: set [handoff] forge = \"github\" "
                     "or \"gitlab\" in baton.toml", code=2)
