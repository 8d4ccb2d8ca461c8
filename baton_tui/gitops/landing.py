"""Landing a task branch on the integration branch, and the diffs around it.

Landing never checks anything out: ``git merge-tree --write-tree`` computes the merge in the
object store, ``commit-tree`` records it (after a process's first landing, Baton writes the
same commit object itself: ``commit_object``), and the integration branch moves from its old
value only if nobody moved it meanwhile (and the task branch is still where it was read):
``update-ref``'s compare-and-swap, which Baton does itself where it can do it as git does
(``ref_update``). A conflict therefore leaves nothing half-merged anywhere: no ref moves, no file is
written.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from baton_tui.core.words import counted

from . import commit_object, ref_update, worktrees
from .git import NO_HOOKS, GitError, git, git_dirs, identity_env, rev_parse, run_git
from .refs import (
    _read_ref_files, _Unsure, known_changes, known_parents, read_ref, remember_tree, tree_of,
)

__all__ = [
    "LandResult",
    "land",
    "land_all",
    "merge_tree",
    "is_ancestor",
    "changed_files",
    "diff_stat",
    "diff_text",
    "files_outside",
]


@dataclass
class LandResult:
    """What ``land`` did: ``ok`` with the integration commit, or the conflicted files; and
    ``tip``, the task branch's commit it merged (what the branch must still hold when it is
    merged home)."""

    ok: bool
    commit: str | None
    conflicts: list[str] = field(default_factory=list)
    message: str = ""
    tip: str | None = None


def is_ancestor(repo, ancestor: str, descendant: str) -> bool:
    """``git merge-base --is-ancestor``; raises GitError when either ref does not exist."""
    proc = run_git(repo, "merge-base", "--is-ancestor", ancestor, descendant)
    if proc.returncode in (0, 1):
        return proc.returncode == 0
    raise GitError(["merge-base", "--is-ancestor", ancestor, descendant], proc.stderr,
                   proc.returncode)


def merge_tree(repo, ours: str, theirs: str) -> tuple[str | None, list[str]]:
    """Merge two commits in the object store only.

    Returns (tree, []) when clean, (None, conflicted paths) on conflict; raises GitError on
    anything else (a bad ref makes merge-tree exit 1 with no output, so that is checked).
    """
    args = ["merge-tree", "--write-tree", "--name-only", "--no-messages", "-z", ours, theirs]
    proc = run_git(repo, *args)
    fields = proc.stdout.split("\0")
    tree = fields[0] if fields and re.fullmatch(r"[0-9a-f]{40,64}", fields[0]) else None
    if proc.returncode == 0 and tree:
        return tree, []
    if proc.returncode == 1 and tree:
        seen: dict[str, None] = {}
        for f in fields[1:]:
            if not f:
                break  # an empty field ends the conflicted-file list
            seen.setdefault(f, None)
        return None, list(seen)
    raise GitError(args, proc.stderr, proc.returncode)


def _full_ref(ref: str) -> str:
    # ``update-ref baton/x/integration`` would create .git/baton/x/integration, not a branch.
    return ref if ref.startswith("refs/") else f"refs/heads/{ref}"


_FULL_ID = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")


def _branch_tip(repo, branch: str) -> tuple[str | None, str | None]:
    """(the full ref ``branch`` names, its commit) as ``git rev-parse`` would read it.

    A full ref or a name that git's lookup order (refs/<name>, refs/tags/…, refs/heads/…,
    refs/remotes/…) finds first under refs/heads/ is read from the ref files; anything else
    (a tag, a remote branch, an object id, a repository the files cannot answer for) goes to
    ``rev-parse``, which peels it to a commit, and then no ref is returned.
    """
    dirs = git_dirs(repo)
    plain = dirs is not None and not _FULL_ID.fullmatch(branch) and not branch.startswith("-")
    if plain and dirs is not None and not branch.startswith("refs/"):
        # git's first rule reads `<git dir>/<name>` itself (HEAD, FETCH_HEAD…): leave it to git.
        plain = not (dirs[0] / branch).exists() and not (dirs[1] / branch).exists()
    if plain and dirs is not None:
        candidates = [branch] if branch.startswith("refs/") else [
            f"refs/{branch}", f"refs/tags/{branch}", f"refs/heads/{branch}",
            f"refs/remotes/{branch}", f"refs/remotes/{branch}/HEAD"]
        try:
            for ref in candidates:
                found = _read_ref_files(dirs[0], dirs[1], ref)
                if found is not None:
                    if ref.startswith("refs/heads/"):
                        return ref, found
                    break
        except _Unsure:
            pass
    # Not a plain branch, or not found in the files: git answers (and peels to a commit).
    return None, rev_parse(repo, branch)


def land(repo, branch: str, onto_ref: str, message: str, *,
         expected_onto: str | None = None) -> LandResult:
    """Land ``branch`` on ``onto_ref`` with a two-parent merge commit, checking nothing out.

    - ``branch`` already contained in ``onto_ref``: ok, nothing changes.
    - otherwise (even when a fast-forward would do): ``merge-tree --write-tree onto branch``,
      ``commit-tree -p onto -p branch``, then one ``update-ref --stdin`` transaction that moves
      ``onto_ref`` from its old value to the merge and verifies that ``branch`` still points
      where it was read — a merge commit per task keeps every landing visible and undoable on
      the integration branch.
    - conflict: ok=False with the conflicted files, and nothing changed anywhere.

    ``expected_onto`` (optional) is the integration commit the caller checked against; if the
    ref has moved since, or moves while we merge, GitError is raised (a concurrent landing
    must never be overwritten). Refs are read from the ref files and a known commit's tree is
    remembered, and the commit written without `commit-tree` and the ref moved without
    `update-ref` after the first landing (`commit_object`, `ref_update`), so a landing costs
    one git process (`merge-tree`) in the usual case, none when nothing landed meanwhile.
    """
    return land_all(repo, [(branch, message)], onto_ref, expected_onto=expected_onto)[0]


def land_all(repo, branches: list[tuple[str, str]], onto_ref: str, *,
             expected_onto: str | None = None) -> list[LandResult]:
    """Land each (branch, message) in turn on ``onto_ref``, as ``land`` would one after
    another — each merge on top of the one before, a conflicting branch left out — and move
    ``onto_ref`` once: one ``update-ref --stdin`` transaction from its old value to the last
    merge, verifying every landed branch is still where it was read. Branches finished
    together so cost one ref move instead of one each. If the transaction fails (the ref or a
    branch moved meanwhile) GitError is raised and nothing moved: no landing is half done.
    """
    ref = _full_ref(onto_ref)
    current = read_ref(repo, ref)
    if current is None:
        raise GitError(["rev-parse", ref], "", 128, f"no such branch: {onto_ref}")
    if expected_onto and current != expected_onto:
        raise GitError(["update-ref", ref], "", 1,
                       f"{onto_ref} moved from {expected_onto[:12]} to {current}")
    onto = current
    results: list[LandResult] = []
    verify: dict[str, str] = {}
    moved: list[str] = []
    for branch, message in branches:
        tip_ref, tip = _branch_tip(repo, branch)
        if tip is None:
            raise GitError(["rev-parse", branch], "", 128, f"no such branch: {branch}")
        name = branch.removeprefix("refs/heads/")  # as messages and the reflog name it
        result = _merge_onto(repo, onto, tip, name, onto_ref, message)
        result.tip = tip
        results.append(result)
        if result.ok and result.commit != onto:
            onto = result.commit or onto
            moved.append(name)
            if tip_ref:
                verify[tip_ref] = tip
    if onto != current:
        # The old value makes this a compare-and-swap: raises GitError if the ref moved (or a
        # task branch did, since it was read).
        reason = f"baton: land {', '.join(moved)}"
        if ref_update.swap(repo, ref, onto, current, verify, reason) is None:
            script = f"update {ref} {onto} {current}\n" + "".join(
                f"verify {name} {tip}\n" for name, tip in verify.items())
            git(repo, *NO_HOOKS, "update-ref", "-m", reason, "--stdin", input=script)
    return results


def _merge_onto(repo, onto: str, tip: str, branch: str, onto_ref: str,
                message: str) -> LandResult:
    """One landing's merge commit of ``tip`` on ``onto``, made in the object store only (no
    ref moves): ok with the commit (``onto`` itself when ``tip`` is already in it), or the
    conflicted files."""
    if tip == onto:
        return LandResult(True, onto, [], f"{branch} is already on {onto_ref}")
    if known_parents(tip) == (onto,):
        # Baton's own commit right on onto (nothing landed since the task began): the merge
        # is that commit's tree — merge-tree's answer, without its process.
        tree: str | None = tree_of(repo, tip)
        conflicts: list[str] = []
    else:
        tree, conflicts = merge_tree(repo, onto, tip)
    if tree is None:
        return LandResult(False, None, conflicts,
                          f"{branch} conflicts with {onto_ref} in {counted(len(conflicts), 'file')}")
    # Merging a branch already contained in onto gives onto's own tree: only then is the
    # ancestry worth a process.
    if tree == tree_of(repo, onto) and is_ancestor(repo, tip, onto):
        return LandResult(True, onto, [], f"{branch} is already on {onto_ref}")
    text, env = message if message.endswith("\n") else message + "\n", identity_env(repo)
    commit = commit_object.write(repo, tree, [onto, tip], text, env)
    if commit is None:  # the first landing of the process, or an unusual repository
        commit = git(repo, *NO_HOOKS, "commit-tree", "--no-gpg-sign", tree, "-p", onto,
                     "-p", tip, "-F", "-", input=text, env=env)
        commit_object.learn(repo, commit, env)
    # Facts about the new commit object, true whether or not a ref ever names it.
    remember_tree(commit, tree, [onto, tip])
    # A merge of two trees without droppings has none (whatever it keeps, one side had).
    if worktrees.holds_droppings(onto) is False and worktrees.holds_droppings(tip) is False:
        worktrees.record_droppings(commit, False)
    return LandResult(True, commit, [], f"landed {branch} on {onto_ref}")


def changed_files(repo, base: str, tip: str) -> list[str]:
    """Paths that differ between ``base`` and ``tip`` (renames as delete + add, so a scope
    check sees both ends). A ``tip`` Baton committed on ``base`` in this process is answered
    from what the commit read (`known_changes`)."""
    commit = read_ref(repo, tip) if tip.startswith("refs/") else tip
    known = known_changes(commit, base) if commit else None
    if known is not None:
        return known
    out = git(repo, "diff", "--name-only", "--no-renames", "-z", base, tip, "--")
    return [p for p in out.split("\0") if p]


def diff_stat(repo, base: str, tip: str) -> list[tuple[str, int, int]]:
    """(path, added, deleted) per changed file from ``--numstat``; binary files count 0, 0."""
    out = git(repo, "diff", "--numstat", "--no-renames", "-z", base, tip, "--")
    rows: list[tuple[str, int, int]] = []
    for entry in out.split("\0"):
        if not entry:
            continue
        added, deleted, path = entry.split("\t", 2)
        rows.append((path, int(added) if added.isdigit() else 0,
                     int(deleted) if deleted.isdigit() else 0))
    return rows


def diff_text(repo, base: str, tip: str) -> str:
    """The patch from ``base`` to ``tip``, uncoloured and with fixed a/ b/ prefixes whatever
    the person's diff config, with undecodable bytes replaced (it is for display)."""
    out = git(repo, "diff", "--no-color", "--no-ext-diff", "--src-prefix=a/", "--dst-prefix=b/",
              base, tip, "--")
    return out.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


@functools.lru_cache(maxsize=512)
def _glob_regex(pattern: str) -> re.Pattern:
    i, n, out = 0, len(pattern), []
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                i += 2
                if i < n and pattern[i] == "/":
                    i += 1
                    out.append("(?:.*/)?")  # **/ : zero or more directories
                else:
                    out.append(".*")
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = pattern.find("]", i + 2 if pattern[i + 1:i + 2] in ("!", "]") else i + 1)
            if j == -1:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1:j]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body.replace(chr(92), chr(92) * 2)}]")
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out) + r"\Z")


def _normalize(p: str) -> str:
    p = p.replace("\\", "/")
    while p.startswith("./"):
        p = p[2:]
    return p.lstrip("/")


def _matches(path: str, pattern: str) -> bool:
    pattern = _normalize(pattern).rstrip("/")
    if not pattern or pattern in (".", "**"):
        return True
    rx = _glob_regex(pattern)
    parts = path.split("/")
    # The path itself, or any of its leading directories (``src`` and ``src/`` cover src/…).
    return any(rx.match("/".join(parts[:k])) for k in range(len(parts), 0, -1))


def files_outside(paths: list[str], scope: list[str]) -> list[str]:
    """The changed paths that match none of the task's scope globs.

    Globs are anchored at the repository root; ``*`` and ``?`` stay within one path component,
    ``**`` crosses directories, and an entry naming a directory (``src/`` or ``src``) covers
    everything below it. An empty scope allows everything.
    """
    if not scope:
        return []
    return [p for p in paths if not any(_matches(_normalize(p), s) for s in scope)]


def refresh(worktree, onto_ref: str) -> list[str] | None:
    """Bring the integration branch into a task's branch before a retry (no hooks, no prompts).

    What the agent left is committed first, then the two are merged in the object store and
    the worktree is reset to the merge. Files that conflict keep git's markers in the
    worktree for the agent to resolve; the merge is recorded either way, so the task lands
    cleanly once it is resolved. Returns the conflicted files ([] when clean), or None when
    the branch already holds the integration branch.
    """
    worktrees.commit_all(worktree,
                         "Baton: work in progress before bringing in the integration branch")
    head = git(worktree, "rev-parse", "HEAD")
    tip = read_ref(worktree, onto_ref) if onto_ref.startswith("refs/") else \
        rev_parse(worktree, onto_ref)
    if tip is None or is_ancestor(worktree, tip, head):
        return None
    proc = run_git(worktree, "merge-tree", "--write-tree", "--name-only", "--no-messages", "-z",
                   head, tip)
    fields = proc.stdout.split("\0")
    if proc.returncode not in (0, 1) or not re.fullmatch(r"[0-9a-f]{40,64}", fields[0]):
        raise GitError(["merge-tree", head, tip], proc.stderr, proc.returncode)
    conflicts = list(dict.fromkeys(f for f in fields[1:] if f)) if proc.returncode == 1 else []
    note = f" (conflicts left for the agent: {', '.join(conflicts)})" if conflicts else ""
    commit = git(worktree, *NO_HOOKS, "commit-tree", "--no-gpg-sign", fields[0], "-p", head,
                 "-p", tip, "-F", "-", input=f"Baton: bring in {onto_ref}{note}\n",
                 env=identity_env(worktree))
    git(worktree, *NO_HOOKS, "update-ref", "-m", "baton: refresh", "HEAD", commit, head)
    git(worktree, *NO_HOOKS, "reset", "-q", "--hard", commit)
    return conflicts
