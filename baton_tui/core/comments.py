"""Review comments as the agent that wrote the lines hears them (standard library only).

A comment is recorded on the task whose commit wrote the line (`handoff/comments.py` finds
it by blame); `baton retry N` sends that task its open comments, each with its file, line and
the lines around it as they were when the person commented.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

HEADING = ("Review comments on lines you wrote. The person reviewed your landed work and asks "
           "for these changes; make each one, keep the rest of your work, then report done.")


def open_comments(comments: "list[dict[str, Any]]") -> "list[dict[str, Any]]":
    return [c for c in comments if c.get("open")]


def as_feedback(comments: "list[dict[str, Any]]") -> str:
    """The comments for a retry's prompt: where, what, and the lines around it (`>` marks
    the line commented on)."""
    lines = [HEADING]
    for c in comments:
        lines += ["", f"{c.get('file')}:{c.get('line')}: {c.get('text')}", "```",
                  str(c.get("context") or ""), "```"]
    return "\n".join(lines)
