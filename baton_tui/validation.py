"""Turn pydantic validation errors into one clear line per problem."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping

    from pydantic import ValidationError


def _where(loc: tuple[Any, ...], root: Any) -> str:
    parts: list[str] = []
    node = root
    for item in loc:
        if isinstance(item, int):
            label = f"[{item}]"
            if isinstance(node, list) and 0 <= item < len(node):
                node = node[item]
                if isinstance(node, dict) and type(node.get("id")) is int:
                    label = f"[{item}] (task {node['id']})"
            else:
                node = None
            parts.append(label)
        else:
            parts.append(("." if parts else "") + str(item))
            node = node.get(item) if isinstance(node, dict) else None
    return "".join(parts) or "document"


def _message(error: Mapping[str, Any]) -> str:
    kind = error.get("type", "")
    if kind == "extra_forbidden":
        return "unknown key"
    if kind == "missing":
        return "missing required key"
    msg = str(error.get("msg", "invalid"))
    msg = msg.removeprefix("Value error, ")
    return msg[:1].lower() + msg[1:]


def error_lines(exc: "ValidationError", root: Any, prefix: str = "",
                by_task: bool = False) -> list[str]:
    """`prefix: where: what` for every error pydantic found, in document order. `by_task`
    (an edit of one task, where the document's layout means nothing to the person): a
    task's fields are named after the task, `task 2: title`, not `tasks[1] (task 2).title`."""
    lines = []
    for error in exc.errors(include_url=False):
        where = _where(tuple(error.get("loc", ())), root)
        if by_task:
            import re  # lazy: only a refused edit needs it

            where = re.sub(r"^tasks\[\d+\] \(task (\d+)\)\.?", r"task \1: ", where).rstrip(": ")
        lines.append(f"{prefix}{where}: {_message(error)}")
    return lines
