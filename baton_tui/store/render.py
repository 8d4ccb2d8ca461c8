"""`baton status` as a person reads it: one line per task, from the snapshot's JSON.

Shared by the CLI and the TUI's `/status` (standard library only).
"""

from __future__ import annotations

import json
import time

from baton_tui.core.events import SETTLED, State
from baton_tui.core.jsontext import cleaned
from baton_tui.core.snapshot import describe, tasks_json
from baton_tui.core.words import LOCAL_RUNNER, counted

TYPE_CHECKING = False  # `typing` stays unimported on the status path (it costs 2.5 ms)
if TYPE_CHECKING:
    from typing import Any


def fmt_secs(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def describe_state(task: dict[str, Any]) -> str:
    """A task's state in plain words: `blocked by #3`, `paused until 15:00`, `failed: why`."""
    if task.get("words"):
        return task["words"]
    return describe(task["state"], task.get("blocked_by"), task.get("until"), task.get("reason"))


def render_status(status: dict[str, Any]) -> str:
    plan = status["plan"]
    if plan is None:
        return "no plan yet — `baton plan --goal \"…\"` or `baton plan --from FILE`"
    conductor = status["conductor"]
    approval = "approved" if plan["approved"] else "not approved"
    lines = [f"plan {plan['slug']} · {plan['state']} · {plan['autonomy']}"
             + (f" · {approval}" if approval != plan["state"] else ""),  # not "approved" twice
             f"goal: {plan['goal']}",
             f"conductor: pid {conductor['pid']}" if conductor else "conductor: not running"
             + (f" — it stopped unexpectedly: {plan['conductor_died']}; `baton resume` "
                "reattaches to its agents" if plan.get("conductor_died") else "")]
    if plan.get("stopped_by"):
        lines.append(f"stopped by {plan['stopped_by']}: no new task starts — `baton resume` "
                     "continues")
    lines += _budget(plan.get("budget"))
    width = min(max((len(t["title"]) for t in status["tasks"]), default=10), 40)
    said = {task["id"]: describe_state(task) for task in status["tasks"]}
    column = max(22, min(STATE_WIDTH, max(map(len, said.values()), default=0)))
    for task in status["tasks"]:
        who = " · ".join(x for x in (task["player"], task.get("model")) if x)
        if task.get("runner", LOCAL_RUNNER) != LOCAL_RUNNER:  # where it runs, when not here
            who += f" @ {task['runner']}" + (f" ({task['node']})" if task.get("node") else "")
        extra = f"  {fmt_secs(task['wall'])}" if task["wall"] else ""
        if task.get("progress") and task["state"] == State.RUNNING:
            extra += f"  — {task['progress'][:60]}"
        words = said[task["id"]]
        lines.append(f"  #{task['id']:<3}{task['title'][:width]:<{width}}  "
                     f"{_cut(words, STATE_WIDTH):<{column}} {task['mode']:<8} {who}{extra}")
        if len(words) > STATE_WIDTH:  # a long reason in full, under its row
            lines.append(f"       {words}")
        lines.extend(_details(task))
    lines += summary_lines(status.get("summary"))
    return "\n".join(lines)


STATE_WIDTH = 28  # the state column's widest: a longer one is cut, and said in full below


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


def summary_lines(summary: dict[str, Any] | None) -> list[str]:
    """The run's totals — wall time, task time, speedup, tokens, cost — and each player's
    (the end of `baton status`, and the app's record of a finished run). None: not run."""
    if not summary or not summary["wall"]:
        return []
    speed = f" · speedup {summary['speedup']}×" if summary["speedup"] else ""
    tokens = f" · {summary['tokens']} tokens" if summary["tokens"] else ""
    lines = [f"run: wall {fmt_secs(summary['wall'])} · task time "
             f"{fmt_secs(summary['task_time'])}{speed}{tokens}{money(summary['cost'])}"]
    for name, use in sorted((summary.get("players") or {}).items()):
        lines.append(f"  {name}: {counted(use['tasks'], 'task')} · {fmt_secs(use['task_time'])} · "
                     f"{use['tokens']} tokens{money(use['cost'])}")
    return lines


def money(cost: float | None) -> str:
    """A cost, or `cost unknown` when no player reported one (never a made-up 0)."""
    return " · cost unknown" if cost is None else f" · ${cost:.4f}"


def _budget(budget: dict[str, Any] | None) -> list[str]:
    if not budget or not any(v is not None for v in budget["limits"].values()):
        return []
    parts = []
    for key, unit in (("tokens", ""), ("cost", "$"), ("time", "")):
        limit, used = budget["limits"][key], budget["used"][key]
        if limit is None:
            continue
        if key == "time":
            parts.append(f"time {fmt_secs(used or 0)} of {fmt_secs(limit)}")
        elif key == "cost":
            parts.append(f"cost {'unknown' if used is None else f'${used:.2f}'} of ${limit:.2f}")
        else:
            parts.append(f"tokens {used} of {limit}")
    return ["budget: " + " · ".join(parts) + (" (hard)" if budget.get("hard") else "")]


def _details(task: dict[str, Any]) -> list[str]:
    """Branch, worktree, the waiting question, the last report and the latest flags."""
    pad = "       "
    lines = []
    if task.get("player_problem"):
        lines.append(f"{pad}✗ {task['player']} is not ready here: {task['player_problem']}")
    if task.get("branch") and task["state"] != State.DRAFT:
        lines.append(f"{pad}branch {task['branch']}")
    if task.get("worktree") and task["state"] not in SETTLED:
        lines.append(f"{pad}worktree {task['worktree']}")
    elif task.get("worktree_reason") and task["state"] not in SETTLED:
        lines.append(f"{pad}worktree {task['worktree_reason']}")
    if task.get("checkpoint"):
        lines.append(f"{pad}asks: {task['checkpoint']['what']}  "
                     f"(baton checkpoint-answer {task['id']} yes|no)")
    if task.get("last_report"):
        lines.append(f"{pad}report {task['last_report'][:100]}")
    told = task.get("told")
    if told:
        waiting = f", {told['unread']} not read yet" if told.get("unread") else ""
        lines.append(f"{pad}told ({told['count']}{waiting}): {told['last'][:100]}")
    if task.get("open_comments"):
        lines.append(f"{pad}{task['open_comments']} open review comment"
                     f"{'s' * (task['open_comments'] > 1)} (`baton retry {task['id']}` sends "
                     f"{'them' if task['open_comments'] > 1 else 'it'})")
    pr = task.get("pr")
    if pr:
        lines.append(f"{pad}pull request #{pr.get('number')} {pr.get('url')}")
    for flag in task.get("flags", [])[-2:]:
        at = time.strftime("%H:%M", time.localtime(flag["at"])) if flag.get("at") else ""
        lines.append(f"{pad}⚑ {flag['kind']}: {flag['detail']} {at}".rstrip())
    return lines


def status_json(status: dict[str, Any]) -> str:
    """`baton status --json`: the same object as `json.dumps(status, indent=2)` gives, laid
    out one task to a line. Each part goes through json's C encoder (an indent switches it
    off, and at 10,000 tasks the pretty-printer alone took longer than everything else).
    Always JSON: a number that is not finite (a damaged store's) is written as null."""
    text = _status_json(status)
    bad = cleaned(text)
    return text if bad is None else _status_json(bad)


def _status_json(status: dict[str, Any]) -> str:
    dumps = json.dumps
    parts = []
    for key, value in status.items():
        text = dumps(value)
        if key == "tasks" and value:
            # One encoder call for the whole list, then a line break before each task: the
            # text `}, {"id": ` cannot occur inside a JSON string (its quote would be
            # escaped), and a break between two tokens never changes what JSON says.
            text = "[\n    " + text[1:-1].replace('}, {"id": ', '},\n    {"id": ') + "\n  ]"
        parts.append(f"  {dumps(key)}: {text}")
    return "{\n" + ",\n".join(parts) + "\n}"


def snapshot_json(snap: Any) -> str:
    """`status_json(snap.as_json())` — the same text — for a `Snapshot`: its tasks are written
    by `core.snapshot.tasks_json`, without making the dictionary of each first."""
    return snapshot_json_lines(snap)[0]


def snapshot_json_lines(snap: Any) -> "tuple[str, list[str] | None]":
    """`snapshot_json(snap)`, and each task's line in it (None when the text had to be
    cleaned of a number JSON cannot carry)."""
    if not snap.tasks:
        return status_json(snap.as_json()), None
    lines = task_lines(snap.tasks)
    return head_and_lines(snap, lines, lines)


def task_lines(tasks: Any) -> list[str]:
    """Each task's line of `status --json`, as `tasks_json` writes them (a task's JSON has no
    line break)."""
    return tasks_json(tasks, "\n").split("\n") if tasks else []


def head_and_lines(snap: Any, lines: list[str], written: list[str]
                   ) -> "tuple[str, list[str] | None]":
    """The text of `snap`'s fields but its tasks, with these lines as its tasks (`lines`,
    as `task_lines` writes them), and the lines (None when the text had to be cleaned of a
    number JSON cannot carry). Only the lines in `written` are looked through for such
    numbers (those written just now): every other one must come from a text that had none."""
    head = type(snap)(**{**snap.fields(), "tasks": ()}).as_json()  # all but the tasks
    if not lines:
        return status_json(head), None
    parts = {key: None if key == "tasks" else json.dumps(value) for key, value in head.items()}
    text = _joined(parts, lines)
    looked = text if written is lines else \
        "".join(filter(None, parts.values())) + "".join(written)
    if "NaN" in looked or "Infinity" in looked:  # (a quick look first, as `cleaned`'s)
        bad = cleaned(text)
        if bad is not None:
            return _status_json(bad), None
    return text, lines


def _joined(parts: "dict[str, str | None]", lines: list[str]) -> str:
    """The whole text, in one join of the tasks' lines (each copy of 10,000 tasks' text
    costs milliseconds): the parts before the tasks go in front of the first line, the
    parts after them behind the last."""
    texts = [f"  {json.dumps(key)}: " + ("[" if text is None else text)
             for key, text in parts.items()]
    at = list(parts.values()).index(None)
    joined = lines.copy()
    joined[0] = "{\n" + ",\n".join(texts[:at + 1]) + "\n    " + joined[0]
    joined[-1] += "\n  ]" + "".join(",\n" + text for text in texts[at + 1:]) + "\n}"
    return ",\n    ".join(joined)
