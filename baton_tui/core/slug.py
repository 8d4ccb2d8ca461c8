"""Slugs and branch names, sanitized here and nowhere else (standard library only)."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

_NOT_SLUG = re.compile(r"[^a-z0-9]+")


@lru_cache(maxsize=1 << 15)  # a 10,000-task snapshot names every task's branch
def slugify(text: str, limit: int = 40, fallback: str = "plan") -> str:
    """Lowercase ASCII letters, digits and single hyphens; never empty, never a git-special name."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = _NOT_SLUG.sub("-", ascii_text.lower()).strip("-")
    slug = slug[:limit].strip("-")
    return slug or fallback


def unique_slug(base: str, taken: set[str]) -> str:
    """`base`, or `base-2`, `base-3`… when it collides."""
    if base not in taken:
        return base
    n = 2
    while f"{base}-{n}" in taken:
        n += 1
    return f"{base}-{n}"


def task_branch(plan_slug: str, task_id: int, title: str) -> str:
    """`baton/<plan-slug>/<id>-<task-slug>`: derived, never taken raw from model output."""
    return f"baton/{slugify(plan_slug, 60)}/{int(task_id)}-{slugify(title, 40, 'task')}"


def integration_branch(plan_slug: str) -> str:
    return f"baton/{slugify(plan_slug, 60)}/integration"


def pr_branch(plan_slug: str, task_id: int | None = None, title: str = "") -> str:
    """The branches `baton handoff pr` pushes: `baton/<plan-slug>/pr/all` (one pull request)
    or `baton/<plan-slug>/pr/<id>-<task-slug>` (a task's in a stack)."""
    tail = "all" if task_id is None else f"{int(task_id)}-{slugify(title, 40, 'task')}"
    return f"baton/{slugify(plan_slug, 60)}/pr/{tail}"
