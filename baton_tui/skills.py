"""Skills: reusable instruction texts a plan attaches to a task's prompt.

A skill is a Markdown file with a tiny front matter block::

    ---
    name: tdd
    description: one line
    when: one line saying when a planner should attach it to a task
    ---
    <instructions addressed to the coding agent>

Built-in skills live in the top-level ``skills/`` folder of the checkout (shipped in
the wheel as ``baton_tui/_skills``). A repository adds or overrides skills with
``.baton/skills/*.md``; a repo skill with the same name as a built-in replaces it,
because the person's repository knows its own conventions best.

Why a hand-written parser instead of YAML: the front matter is flat ``key: value``
lines, this module is imported by fast paths (plan validation, prompt composition)
and must stay standard-library only, and a strict small grammar gives one clear
error line instead of a YAML stack trace.

Skills only add instructions. They never change a task's mode, scope or
permissions: a research task with the ``tdd`` skill is still read-only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from baton_tui.core.errors import BatonError

#: Valid skill names: lower-case, digits, ``-`` and ``_``; they appear in plan files
#: and on the command line (``baton task-skills N tdd,verify``), so keep them plain.
NAME_RE = re.compile(r"[a-z0-9][a-z0-9_-]*")

#: Source label for skills that ship with Baton (repo skills carry their file path).
BUILTIN = "built-in"

_FENCE = "---"


@dataclass(frozen=True)
class Skill:
    """One skill as loaded: front matter fields plus the instruction body."""

    name: str
    description: str
    when: str
    body: str
    source: str  # "built-in" or the file path


def builtin_dir() -> Path:
    """Where the built-in skills live.

    From a source checkout (or an editable install) that is the top-level ``skills/``
    folder next to the package, so editing a skill needs no reinstall; an installed
    wheel carries the same files as ``baton_tui/_skills`` (hatch force-include).
    """
    here = Path(__file__).resolve().parent
    checkout = here.parent / "skills"
    if checkout.is_dir():
        return checkout
    return here / "_skills"


def _first_line(text: str) -> str:
    """First non-empty line, without Markdown heading marks: a fallback description."""
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line.lstrip("#").strip()
    return ""


def _unquote(value: str) -> str:
    """Strip one pair of matching quotes, so ``description: "a: b"`` works as in YAML."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def parse_skill(text: str, source: str, fallback_name: str) -> Skill:
    """Parse one skill file's text.

    Front matter is optional: without it the name is ``fallback_name`` (the file
    stem) and the description is the first non-empty line. With it, every line
    between the ``---`` fences must be ``key: value`` (blank lines and ``#``
    comments are allowed); unknown keys are ignored so newer skill files still load
    in older Baton versions. Raises ``ValueError`` with a one-line message when the
    front matter is malformed, the name is invalid, or there is no instruction text.
    """
    text = text.lstrip("\ufeff")
    lines = text.splitlines()
    start = 0
    while start < len(lines) and not lines[start].strip():
        start += 1

    meta: dict[str, str] = {}
    if start < len(lines) and lines[start].strip() == _FENCE:
        end = None
        for i in range(start + 1, len(lines)):
            if lines[i].strip() == _FENCE:
                end = i
                break
        if end is None:
            raise ValueError(
                f"front matter opened with '{_FENCE}' on line {start + 1} is never closed"
            )
        for i in range(start + 1, end):
            raw = lines[i].strip()
            if not raw or raw.startswith("#"):
                continue
            key, sep, value = raw.partition(":")
            key = key.strip()
            if not sep or not key:
                raise ValueError(f"front matter line {i + 1} is not 'key: value': {raw!r}")
            if key in meta:
                raise ValueError(f"front matter line {i + 1} repeats the key {key!r}")
            meta[key] = _unquote(value.strip())
        body = "\n".join(lines[end + 1 :]).strip()
    else:
        body = text.strip()

    name = meta.get("name", fallback_name).strip()
    if not NAME_RE.fullmatch(name):
        raise ValueError(
            f"skill name {name!r} is invalid: use lower-case letters, digits, '-' or '_', "
            "starting with a letter or digit"
        )
    if not body:
        raise ValueError(f"skill {name!r} has no instruction text after the front matter")
    description = meta.get("description", "").strip() or _first_line(body)
    when = meta.get("when", "").strip()
    return Skill(name=name, description=description, when=when, body=body, source=source)


def _load_dir(folder: Path, source: str | None) -> dict[str, Skill]:
    """Load every ``*.md`` in ``folder`` (sorted, so errors and order are stable).

    ``source`` is the label to record; ``None`` means "the file's own path".
    Problems become ``BatonError`` naming the file, exit code 2 (bad input).
    """
    found: dict[str, Skill] = {}
    if not folder.is_dir():
        return found
    for path in sorted(folder.glob("*.md")):
        if not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise BatonError(f"{path}: cannot read skill: {exc}", code=2) from exc
        try:
            skill = parse_skill(text, source or str(path), path.stem)
        except ValueError as exc:
            raise BatonError(f"{path}: {exc}", code=2) from exc
        if skill.name in found:
            other = found[skill.name].source
            raise BatonError(
                f"{path}: skill name {skill.name!r} is already defined by {other}", code=2
            )
        found[skill.name] = skill
    return found


def load_skills(repo: Path | None) -> dict[str, Skill]:
    """All skills available to a plan: built-ins, then the repo's ``.baton/skills/*.md``.

    A repo skill overrides a built-in of the same name (the repository's own
    conventions win). The result is sorted by name so listings are stable. A
    malformed repo skill raises ``BatonError("<path>: <problem>", code=2)``.
    """
    skills = _load_dir(builtin_dir(), BUILTIN)
    if repo is not None:
        skills.update(_load_dir(Path(repo) / ".baton" / "skills", None))
    return dict(sorted(skills.items()))


def render_skills(skills: list[Skill]) -> str:
    """The block appended to a task's prompt: ``## Skills for this task`` then each skill.

    Skills appear in the order given (the order the task lists them), each under its
    own heading with its body verbatim. An empty list renders as ``""`` so a task
    without skills gets no empty section.
    """
    if not skills:
        return ""
    parts = [
        "## Skills for this task",
        "",
        "Follow these skills while you work on this task. They add method, never "
        "permissions: the task's mode and scope still apply, and you still finish only "
        'with `baton report done --summary "…"` or `baton report failed --reason "…"`.',
    ]
    for skill in skills:
        parts += ["", f"### Skill: {skill.name}", "", skill.body.strip()]
    return "\n".join(parts) + "\n"


def resolve(names: list[str], available: dict[str, Skill]) -> list[Skill]:
    """Look up a task's skill names, keeping their order and dropping repeats.

    Unknown names raise one ``BatonError`` (exit code 2) listing all of them and the
    names that do exist, so a typo in a plan file is fixed in one go.
    """
    unknown: list[str] = []
    chosen: list[Skill] = []
    seen: set[str] = set()
    for name in names:
        if name in seen:
            continue
        seen.add(name)
        if name in available:
            chosen.append(available[name])
        else:
            unknown.append(name)
    if unknown:
        plural = "skill" if len(unknown) == 1 else "skills"
        known = ", ".join(sorted(available)) or "none"
        raise BatonError(f"unknown {plural}: {', '.join(unknown)} (available: {known})", code=2)
    return chosen
