"""The words of a pull request Baton opens, built from the plan and what its tasks reported.

`--single`: the goal, a table of the landed tasks (player, model), each task's report,
flags and check, and the run's summary. `--stack`: each pull request names its place in
the stack, the one it is based on and the tasks it depends on, with its task's report.
Agents' words are given as every front end shows them (`shown`), in Markdown code spans
or quoted lines, never as Markdown of their own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from baton_tui.core.snapshot import Snapshot, TaskSnap
from baton_tui.core.visible import shown

FOOTER = "_Published by Baton from plan `{slug}`: `baton handoff pr` updates it._"


@dataclass
class Part:
    """One pull request of a stack as its neighbours name it."""

    task: int
    title: str
    branch: str
    number: int | None


def _cell(text: str | None) -> str:
    return shown(text or "").replace("|", "\\|").replace("\n", " ") or "—"


def _quoted(text: str) -> list[str]:
    return [f"> {line}" if line else ">" for line in shown(text).strip().splitlines()]


def _report(task: TaskSnap, check: dict[str, Any] | None) -> list[str]:
    lines = _quoted(task.summary) if task.summary else ["_(no report)_"]
    for flag in task.flags:
        lines.append(f"- ⚑ **{flag.get('kind')}**: {_cell(str(flag.get('detail')))}")
    if task.check:
        said = "not run" if not check else (
            "passed" if check.get("exit") == 0 else f"exit {check.get('exit')}")
        lines.append(f"- check `{_cell(task.check)}`: {said}")
    return lines


def _ref(part: Part) -> str:
    return f"#{part.number}" if part.number else f"`{part.branch}`"


def single(snap: Snapshot, landed: list[int], checks: dict[int, Any]) -> str:
    """The body of the plan's one pull request."""
    lines = ["## Goal", "", *_quoted(snap.goal), "", "## Tasks", "",
             "| # | task | player | model | state |", "| --- | --- | --- | --- | --- |"]
    for task in snap.tasks:
        lines.append(f"| {task.id} | {_cell(task.title)} | {task.player} | "
                     f"{_cell(task.model) if task.model else 'default'} | {task.state} |")
    lines += ["", "## Reports"]
    for task_id in landed:
        found = snap.task(task_id)
        if found is not None:
            lines += ["", f"### Task {found.id}: {_cell(found.title)}", "",
                      *_report(found, checks.get(found.id))]
    lines += ["", "## Run", "", *_summary(snap, landed), "", FOOTER.format(slug=snap.slug)]
    return "\n".join(lines) + "\n"


def _summary(snap: Snapshot, landed: list[int]) -> list[str]:
    summary = snap.summary or {}
    parts = [f"{len(landed)} of {len(snap.tasks)} tasks landed"]
    if summary.get("wall"):
        parts.append(f"{summary['wall']:.0f}s wall")
    if summary.get("tokens"):
        parts.append(f"{summary['tokens']:,} tokens")
    if summary.get("cost") is not None:
        parts.append(f"${summary['cost']:.2f}")
    return [" · ".join(parts), "", f"Onto `{snap.base_branch}` from "
            f"`{(snap.base_commit or '')[:12]}`."]


def stacked(snap: Snapshot, parts: list[Part], at: int, base: str,
            checks: dict[int, Any]) -> str:
    """The body of the stack's pull request `at` (0-based)."""
    part = parts[at]
    task = snap.task(part.task)
    assert task is not None
    under = f"`{base}`" if at == 0 else f"{_ref(parts[at - 1])} (task {parts[at - 1].task})"
    lines = [f"Part {at + 1} of {len(parts)} of a stack for: {_cell(snap.goal)}", "",
             f"Based on {under}: review and merge from the bottom of the stack up.", ""]
    deps = list(task.depends_on)
    if deps:
        by_task = {p.task: p for p in parts}
        named = [f"task {d}" + (f" ({_ref(by_task[d])})" if d in by_task else "") for d in deps]
        lines += [f"Depends on: {', '.join(named)}.", ""]
    lines += ["## The stack", ""]
    for i, other in enumerate(parts):
        mark = " ← this pull request" if i == at else ""
        lines.append(f"{i + 1}. task {other.task}: {_cell(other.title)} — {_ref(other)}{mark}")
    lines += ["", f"## Task {task.id}: {_cell(task.title)}", "",
              f"Player `{task.player}`" + (f", model `{_cell(task.model)}`" if task.model
                                           else "") + ".", "",
              *_report(task, checks.get(task.id)), "", FOOTER.format(slug=snap.slug)]
    return "\n".join(lines) + "\n"
