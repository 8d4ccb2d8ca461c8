"""`baton doctor`'s look at the repository: would `baton approve` and a run go through here?

The one place Baton uses GitPython. A repository object reads better than a handful of
plumbing calls for these questions (is there a commit, is HEAD detached, which branch, is
the tree dirty), and `baton doctor` is never on a fast path. Its import costs tens of
milliseconds and runs `git --version`, which is why `gitops/`, `baton status` and the
run itself stay on plain `git` (see `baton_tui/gitops/git.py`).
"""

from __future__ import annotations

from pathlib import Path


def repository_lines(root: Path) -> list[str]:
    """Doctor lines about the repository at `root` (✓ ready, ✗ approval is refused, · note).

    Call only when a git executable was found: GitPython needs one to import.
    """
    # lazy: GitPython imports only where a git executable was found
    import git  # GitPython

    try:
        repo = git.Repo(root)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return ["· not a git repository — tasks run in this folder, one at a time (`git init` "
                "and a first commit give each task a worktree of its own)"]
    with repo:
        if not repo.head.is_valid():
            return ["✗ the repository has no commit yet — commit something first, so tasks "
                    "have a base to start from"]
        commit = repo.head.commit.hexsha[:12]
        if repo.head.is_detached:
            return [f"✗ HEAD is detached at {commit} — switch to the branch the work should "
                    "land on before approving"]
        lines = [f"✓ repository on {repo.active_branch.name} at {commit}"]
        if repo.is_dirty(untracked_files=False):
            lines.append("· uncommitted changes to tracked files: agents will not see them "
                         "(they start from the last commit), and `baton handoff merge` waits "
                         "until they are committed or stashed")
        return lines
