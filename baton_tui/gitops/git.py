"""Thin, UI-free wrapper around the ``git`` command line.

Why subprocess and not GitPython: GitPython is slow to import (it matters for a CLI that starts
often) and hides the exact commands run. Every call here is an argv list (never a shell string),
runs with ``GIT_TERMINAL_PROMPT=0`` (a background conductor must never wait on a credential
prompt) and ``LC_ALL=C`` (messages we parse stay in English), and with stdin closed unless input
is given (so git can never block on the terminal).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from pathlib import Path

__all__ = [
    "GitError",
    "git",
    "run_git",
    "git_version",
    "parse_version",
    "supports_worktrees",
    "repo_root",
    "common_dir",
    "git_dir",
    "current_branch",
    "head_commit",
    "rev_parse",
    "is_dirty",
    "dirty_files",
    "status_paths",
    "identity_env",
    "agent_identity_env",
    "git_dirs",
    "BATON_IDENTITY",
    "NO_HOOKS",
]

# Variables that would redirect git away from the repository we pass as ``cwd`` (they are set
# when Baton itself runs inside a git hook, for instance). They are dropped from the inherited
# environment; callers that mean them pass them explicitly through ``env``.
_REDIRECTING_VARS = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_PREFIX",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
)

#: Prefix for git commands that must run no hook at all: Baton's own plumbing commits and ref
#: moves (``update-ref`` runs the reference-transaction hook) are not the person's commits, and a
#: failing or slow hook must not decide whether an agent's work is kept.
NO_HOOKS: tuple[str, ...] = ("-c", f"core.hooksPath={os.devnull}")

#: The identity Baton commits under when the repository has none configured.
BATON_IDENTITY = {
    "GIT_AUTHOR_NAME": "Baton",
    "GIT_AUTHOR_EMAIL": "baton@localhost",
    "GIT_COMMITTER_NAME": "Baton",
    "GIT_COMMITTER_EMAIL": "baton@localhost",
}


class GitError(Exception):
    """A git command failed.

    Carries the argv (``args_``, named so to leave ``Exception.args`` alone), git's stderr and
    its exit status, so callers can tell "not found" from "conflict" from "lock held" without
    re-running anything.
    """

    def __init__(self, args: list[str], stderr: str, returncode: int, message: str | None = None):
        self.args_ = list(args)
        self.stderr = stderr
        self.returncode = returncode
        detail = message or _gist(stderr)
        super().__init__(f"git {' '.join(self.args_)} failed (exit {returncode}): {detail}")


def _gist(stderr: str) -> str:
    """git's own verdict: its last `fatal:`/`error:` line (the advice after it, such as
    "remove the file manually to continue", would hide which file), else its last line."""
    lines = stderr.strip().splitlines() or ["(no output)"]
    verdicts = [line for line in lines if line.startswith(("fatal: ", "error: "))]
    return (verdicts or lines)[-1]


def _env(extra: dict | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in _REDIRECTING_VARS}
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["LC_ALL"] = "C"
    if extra:
        env.update(extra)
    return env


def run_git(
    cwd: str | os.PathLike,
    *args: str,
    input: str | None = None,
    env: dict | None = None,
) -> subprocess.CompletedProcess:
    """Run git and return the completed process whatever its exit status.

    For the commands whose exit status *is* the answer (``merge-base --is-ancestor``,
    ``merge-tree``): ``git()`` would have to turn those into exceptions.
    """
    argv = ["git", *[os.fspath(a) for a in args]]
    try:
        return subprocess.run(
            argv,
            cwd=os.fspath(cwd),
            input=input,
            stdin=None if input is not None else subprocess.DEVNULL,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="surrogateescape",
            env=_env(env),
        )
    except FileNotFoundError as exc:
        # Either git is missing or cwd does not exist: both are "git could not run".
        raise GitError(argv[1:], str(exc), 127) from exc


def git(
    cwd: str | os.PathLike,
    *args: str,
    input: str | None = None,
    env: dict | None = None,
    check: bool = True,
) -> str:
    """Run ``git args…`` in ``cwd`` and return stdout without its trailing newline.

    Raises ``GitError`` on a non-zero exit unless ``check`` is False.
    """
    proc = run_git(cwd, *args, input=input, env=env)
    if check and proc.returncode != 0:
        raise GitError(list(args), proc.stderr, proc.returncode)
    out = proc.stdout
    return out[:-1] if out.endswith("\n") else out


@functools.lru_cache(maxsize=1)
def git_version() -> tuple[int, int, int] | None:
    """The installed git's version, or None when git is missing.

    Baton degrades (tasks run in the folder, one at a time) without a usable git, so this must
    never raise.
    """
    if shutil.which("git") is None:
        return None
    try:
        proc = subprocess.run(
            ["git", "--version"], capture_output=True, text=True, stdin=subprocess.DEVNULL,
            env=_env(None), timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return parse_version(proc.stdout) if proc.returncode == 0 else None


def parse_version(text: str) -> tuple[int, int, int] | None:
    """`git --version`'s words as a version: `git version 2.37.1 (Apple Git-137.1)` →
    (2, 37, 1), `git version 2.39.0.windows.1` → (2, 39, 0)."""
    m = re.search(r"\bversion (\d+)\.(\d+)(?:\.(\d+))?", text) or \
        re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)) if m else None


def supports_worktrees() -> bool:
    """True when git can run Baton's worktree model: 2.38+, for ``merge-tree --write-tree``.

    Landing without touching any checkout depends on that merge-tree mode.
    """
    v = git_version()
    return v is not None and v >= (2, 38, 0)


#: A `.git` read before -> (its stamp then, its git directory's HEAD, what it named): read again
#: only when the stamp changed (a worktree moved or made again rewrites its `.git` file) or the
#: HEAD is gone (a worktree's record pruned). A conductor asks this tens of times per task.
_DOT_GIT: dict[str, tuple[tuple[int, int, int, int], str, tuple[Path, Path]]] = {}


def _dirs_from_dot_git(top: Path) -> tuple[Path, Path] | None:
    dot = os.path.join(top, ".git")
    try:
        st = os.stat(dot)
    except (OSError, ValueError):
        return None
    stamp = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    known = _DOT_GIT.get(dot)
    if known is not None and known[0] == stamp and os.path.isfile(known[1]):
        return known[2]
    found = _read_dot_git(Path(top))
    if found is not None:
        if len(_DOT_GIT) > 10_000:
            _DOT_GIT.clear()
        _DOT_GIT[dot] = (stamp, os.path.join(found[0], "HEAD"), found)
    return found


def _read_dot_git(top: Path) -> tuple[Path, Path] | None:
    dot = top / ".git"
    try:
        if dot.is_dir():
            gitdir = dot
        elif dot.is_file():
            text = dot.read_text(encoding="utf-8").strip()
            if not text.startswith("gitdir:"):
                return None
            gitdir = Path(text[len("gitdir:"):].strip())
            if not gitdir.is_absolute():
                gitdir = top / gitdir
        else:
            return None
        if not (gitdir / "HEAD").is_file():
            return None
        common = gitdir
        pointer = gitdir / "commondir"
        if pointer.is_file():
            common = Path(pointer.read_text(encoding="utf-8").strip())
            if not common.is_absolute():
                common = gitdir / common
        return Path(os.path.abspath(gitdir)), Path(os.path.abspath(common))
    except (OSError, UnicodeDecodeError):
        return None


_DIRS: dict[str, tuple[Path, Path]] = {}


def git_dirs(path: str | os.PathLike) -> tuple[Path, Path] | None:
    """(git directory, common directory) of the worktree whose top is ``path``: read from its
    ``.git`` without git when ``path`` is a top, else asked of git once and remembered.
    None when ``path`` is in no repository."""
    top = Path(path)
    found = _dirs_from_dot_git(top)
    if found is not None:
        return found
    key = os.path.abspath(top)
    if key in _DIRS:
        return _DIRS[key]
    try:
        proc = run_git(top, "rev-parse", "--absolute-git-dir", "--git-common-dir")
    except GitError:
        return None
    lines = proc.stdout.splitlines()
    if proc.returncode != 0 or len(lines) != 2:
        return None
    common = Path(lines[1])
    if not common.is_absolute():
        common = top / common
    _DIRS[key] = (Path(lines[0]), Path(os.path.abspath(common)))
    return _DIRS[key]


def repo_root(path: str | os.PathLike) -> Path | None:
    """The top of the working tree containing ``path``, or None (not a repo, bare, or missing).

    A folder holding a ``.git`` that names a git directory is its own top (no git process);
    anything else asks git.
    """
    p = Path(path)
    if not p.is_dir():
        p = p.parent
    if _dirs_from_dot_git(p) is not None:
        return p.resolve()
    try:
        proc = run_git(p, "rev-parse", "--show-toplevel")
    except GitError:
        return None
    if proc.returncode != 0 or not proc.stdout.strip():
        return None
    return Path(proc.stdout.rstrip("\n")).resolve()


def common_dir(path: str | os.PathLike) -> Path:
    """The repository's shared git directory (the same from every worktree).

    Where refs, objects and Baton's own repo-wide state live; per-worktree ``--git-dir``
    would differ between the person's checkout and an agent's worktree.
    """
    out = git(path, "rev-parse", "--git-common-dir")
    p = Path(out)
    if not p.is_absolute():
        p = Path(path) / p
    return p.resolve()


def git_dir(path: str | os.PathLike) -> Path:
    """This worktree's own git directory (holds its HEAD and index)."""
    out = git(path, "rev-parse", "--git-dir")
    p = Path(out)
    if not p.is_absolute():
        p = Path(path) / p
    return p.resolve()


def current_branch(repo: str | os.PathLike) -> str | None:
    """The checked-out branch's short name, or None when HEAD is detached.

    An unborn branch (fresh ``git init``) still counts as checked out. The name is the ref's
    own, not git's `--short` form: with a tag of the same name that would say `heads/main`.
    """
    proc = run_git(repo, "symbolic-ref", "-q", "HEAD")
    if proc.returncode == 0:
        ref = proc.stdout.strip()
        return ref.removeprefix("refs/heads/") or None
    if proc.returncode == 1:
        return None
    raise GitError(["symbolic-ref", "-q", "HEAD"], proc.stderr, proc.returncode)


def head_commit(repo: str | os.PathLike) -> str:
    """The commit HEAD points at (raises GitError on an unborn branch)."""
    return git(repo, "rev-parse", "--verify", "HEAD^{commit}")


def rev_parse(repo: str | os.PathLike, ref: str) -> str | None:
    """The commit ``ref`` names, or None when it names no commit.

    Peels tags to their commit, since every caller wants something it can merge or diff.
    Refs that look like options are refused rather than passed to git.
    """
    if not ref or ref.startswith("-"):
        return None
    proc = run_git(repo, "rev-parse", "--verify", "-q", f"{ref}^{{commit}}")
    if proc.returncode != 0:
        return None
    return proc.stdout.strip() or None


def status_paths(repo: str | os.PathLike, untracked: bool) -> list[str]:
    """Repo-relative paths `git status` lists as changed (staged, unstaged or unmerged), and
    with `untracked` the untracked files that are not ignored. Raises GitError when git fails.
    """
    out = git(
        repo, "status", "--porcelain=v1", "-z",
        f"--untracked-files={'all' if untracked else 'no'}", "--no-renames",
        env={"GIT_OPTIONAL_LOCKS": "0"},
    )
    return [entry[3:] for entry in out.split("\0") if len(entry) > 3]


def dirty_files(repo: str | os.PathLike) -> list[str]:
    """Tracked files with uncommitted changes (staged, unstaged or unmerged), repo-relative.

    Untracked files are deliberately not counted: a merge never touches them unless it would
    overwrite one, and git itself refuses that case.
    """
    return status_paths(repo, untracked=False)


def is_dirty(repo: str | os.PathLike) -> bool:
    """True when tracked files have uncommitted changes; untracked files do not count."""
    return bool(dirty_files(repo))


def identity_env(repo: str | os.PathLike) -> dict:
    """Environment that gives Baton's commits an identity when the repo has none.

    ``git commit``/``commit-tree`` refuse to run without user.name and user.email; a fresh
    machine or a CI box often has neither, and Baton must still be able to land work. When the
    person has an identity (config, or the GIT_AUTHOR_*/GIT_COMMITTER_* variables) we use theirs
    and return {}; otherwise every commit says plainly that Baton made it.
    """
    env_has = all(
        os.environ.get(k) for k in BATON_IDENTITY
    )
    if env_has:
        return {}
    config_name, config_email = _configured_identity(repo)
    name = os.environ.get("GIT_AUTHOR_NAME") or config_name
    email = os.environ.get("GIT_AUTHOR_EMAIL") or config_email
    if name and email:
        return {}
    return dict(BATON_IDENTITY)


def agent_identity_env(repo: str | os.PathLike) -> dict:
    """What an agent's environment needs so git knows who commits when no config file names
    the person: `user.name`/`user.email` as configuration given through the environment
    (GIT_CONFIG_COUNT, after any the person set), since some CLIs ask `git config user.name`
    and, finding none, try to write one — into a git config that is read-only to them
    (Aider crashes so). The person's identity where their GIT_AUTHOR_*/GIT_COMMITTER_*
    variables (or EMAIL) hold it, else Baton's, which then goes in those variables too
    (`git commit`). {} when a config file has both."""
    config_name, config_email = _configured_identity(repo)
    if config_name and config_email:
        return {}
    found = identity_env(repo)  # {}: the person's variables name them

    def person(*keys: str) -> str:
        return next((os.environ[k] for k in keys if os.environ.get(k)), "")

    name = config_name or person("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME") \
        or BATON_IDENTITY["GIT_AUTHOR_NAME"]
    email = config_email or person("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL", "EMAIL") \
        or BATON_IDENTITY["GIT_AUTHOR_EMAIL"]
    try:
        count = int(os.environ.get("GIT_CONFIG_COUNT") or 0)
    except ValueError:
        count = 0
    return {**found, "GIT_CONFIG_COUNT": str(count + 2),
            f"GIT_CONFIG_KEY_{count}": "user.name", f"GIT_CONFIG_VALUE_{count}": name,
            f"GIT_CONFIG_KEY_{count + 1}": "user.email",
            f"GIT_CONFIG_VALUE_{count + 1}": email}


_KNOWN_IDENTITY: dict[tuple, tuple[str, str]] = {}


def _file_stamp(path: Path) -> tuple | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (str(path), st.st_ino, st.st_mtime_ns, st.st_size)


def _config_stamp(repo: str | os.PathLike) -> tuple | None:
    """What git's answer about config depends on: the repository's shared git directory,
    the config files git reads for it (their inode, mtime and size: git rewrites a config
    file through a lock and a rename), and the config the environment injects. None when
    the git directories cannot be read without git."""
    dirs = git_dirs(repo)
    if dirs is None:
        return None
    gitdir, common = dirs
    home = Path(os.environ.get("HOME") or "~").expanduser()
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    files = [common / "config", gitdir / "config.worktree", xdg / "git" / "config"]
    files.append(Path(os.environ["GIT_CONFIG_GLOBAL"]) if os.environ.get("GIT_CONFIG_GLOBAL")
                 else home / ".gitconfig")
    if not os.environ.get("GIT_CONFIG_NOSYSTEM"):
        files.append(Path(os.environ.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig"))
    injected = tuple(sorted((k, v) for k, v in os.environ.items()
                            if k.startswith("GIT_CONFIG") or k in ("EMAIL",)))
    return (str(common), injected, *(stamp for f in files if (stamp := _file_stamp(f))))


def _configured_identity(repo: str | os.PathLike) -> tuple[str, str]:
    """user.name and user.email from git config, in one ``git config`` call.

    The answer is remembered per repository for as long as the config files it came from are
    unchanged (a conductor commits and lands many times, in many worktrees of one
    repository), so setting an identity later takes effect at the next commit. A change made
    only inside a file that config includes is seen by the next Baton process.
    """
    stamp = _config_stamp(repo)
    if stamp is not None and stamp in _KNOWN_IDENTITY:
        return _KNOWN_IDENTITY[stamp]
    proc = run_git(repo, "config", "-z", "--get-regexp", r"^user\.(name|email)$")
    found = {"user.name": "", "user.email": ""}
    if proc.returncode == 0:
        for entry in proc.stdout.split("\0"):
            key, _, value = entry.partition("\n")
            if key in found:
                found[key] = value.strip()  # the last value wins, as for `git config --get`
    answer = (found["user.name"], found["user.email"])
    if stamp is not None and proc.returncode in (0, 1):
        if len(_KNOWN_IDENTITY) > 64:
            _KNOWN_IDENTITY.clear()
        _KNOWN_IDENTITY[stamp] = answer
    return answer
