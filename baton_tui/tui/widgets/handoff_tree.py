"""The handoff's outline: one foldable section per landed task (report, check, flags, the
checkpoints Baton decided, its files with +/-), then the build tasks that have not landed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from baton_tui.core.events import State


@dataclass(frozen=True)
class Entry:
    """What a node stands for: `task`, `file` (of `task`, or of the combined diff), `info`."""

    kind: str
    task: Any = None
    file: Any = None


def _clip(text: Any, limit: int = 90) -> str:
    line = " ".join(str(text or "").split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def gist(output: Any) -> str:
    """A check output's last line with words or figures in it — `OK`, `3 passed in 0.2s` —
    not a rule of dashes (unittest closes with one before its summary)."""
    lines = [line for line in str(output or "").splitlines() if any(c.isalnum() for c in line)]
    return lines[-1].strip() if lines else ""


def task_label(task: Any) -> Text:
    """Mark, id and counts first: a narrow tree cuts the title, never what it adds up to."""
    mark = "✓" if task.state == State.MERGED else "●"
    label = Text()
    label.append(f"{mark} #{task.id} ", style="bold")
    label.append(f"+{task.added} −{task.deleted} ", style="dim")
    label.append(_clip(task.title, 40))
    label.append(f"  {task.state}", style="bold" if task.state == State.MERGED else "")
    return label


def file_label(file: Any) -> Text:
    """Counts first, then the path (a long path is what a narrow tree cuts)."""
    label = Text(no_wrap=True)
    label.append(f"+{file.added} −{file.deleted} ", style="dim")
    label.append(file.path)
    return label


def details_text(task: Any) -> str:
    """A task's report, check output, flags and decisions in full: what the outline's
    one-line leaves cut, shown in the right pane when one of them is selected."""
    parts = [f"#{task.id} {task.title}"]
    if task.summary:
        parts.append(f"report:\n{task.summary}")
    if task.check:
        parts.append(f"check: exit {task.check.get('exit')}\n{task.check.get('output') or ''}")
    for flag in task.flags:
        parts.append(f"⚑ {flag.get('kind')}: {flag.get('detail')}")
    if getattr(task, "moved", None):
        parts.append(f"⚠ {task.moved['said']}")
    for decision in task.decisions:
        parts.append(f"decided for you ({decision.get('by')}): {decision.get('answer')} — "
                     f"{decision.get('what')}")
    return "\n\n".join(part.rstrip() for part in parts)


def _details(node: TreeNode, task: Any, room: int = 90) -> None:
    """One leaf per detail, each cut to `room` with a `…` (selected, it shows in full)."""
    info = Entry("info", task)

    def leaf(text: str, style: str = "") -> None:
        node.add_leaf(Text(_clip(text, room), style=style), info)

    if task.summary:
        leaf("report: " + str(task.summary), "italic")
    if task.check:
        code = task.check.get("exit")
        output = gist(task.check.get("output"))
        leaf(f"check: exit {code}" + (f" — {output}" if output else ""),
             "" if code == 0 else "bold")
    for flag in task.flags:
        leaf(f"⚑ {flag.get('kind')}: {flag.get('detail')}", "bold")
    if getattr(task, "moved", None):  # its branch moved since it landed
        leaf(f"⚠ {task.moved['said']}", "bold")
    for decision in task.decisions:
        leaf(f"decided for you ({decision.get('by')}): {decision.get('answer')} — "
             f"{decision.get('what')}")


def fill(tree: Tree, review: Any, expanded: set[int]) -> None:
    """Rebuild the outline from a HandoffReview, keeping the sections that were open."""
    tree.clear()
    root = tree.root
    width = tree.scrollable_content_region.width
    room = max(20, width - 6) if width > 0 else 90  # a leaf's guide takes about 6 cells
    for task in review.tasks:
        node = root.add(task_label(task), Entry("task", task),
                        expand=task.id in expanded)
        _details(node, task, room)
        for file in task.files:
            node.add_leaf(file_label(file), Entry("file", task, file))
    if review.waiting:
        waiting = root.add(Text("not landed (not merged)", style="dim"), Entry("info"),
                           expand=True)
        for task in review.waiting:
            why = f"failed on a conflict in {', '.join(task.conflicts)}" if task.conflicts \
                else (task.reason or task.state)
            waiting.add_leaf(Text(f"#{task.id} {_clip(task.title, 40)} — {_clip(why, 60)}"),
                             Entry("waiting", task))
    everything = root.add(Text(f"all files ({len(review.files)})", style="dim"), Entry("info"),
                          expand=False)
    for file in review.files:
        everything.add_leaf(file_label(file), Entry("file", None, file))
