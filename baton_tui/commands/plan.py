"""`baton plan`, `baton task-*`, `baton approve`."""

from __future__ import annotations

import json
import os
import sys
from argparse import Namespace

from typing import TYPE_CHECKING, Any

from baton_tui import api
from baton_tui.core.errors import BatonError
from baton_tui.core.visible import shown
from baton_tui.core.words import counted

if TYPE_CHECKING:
    from baton_tui.plan.model import PlanDocument


def _read_source(name: str) -> tuple[str, str]:
    return api.read_plan_text(name)  # bounded: `--from /dev/zero` is refused, not read forever


def render_plan(doc: "PlanDocument", approved: bool, slug: str) -> str:
    """The plan as a person reads it in a terminal."""
    lines = [f"plan {slug} — {'approved' if approved else 'not approved'} · autonomy "
             f"{doc.autonomy}", f"goal: {doc.goal}", ""]
    for t in doc.tasks:
        who = " · ".join(x for x in (t.player, t.model, t.effort) if x)
        deps = f" after {', '.join(map(str, t.depends_on))}" if t.depends_on else ""
        lines.append(f"  {t.id:>2}. {t.title}  [{t.mode}] {who}{deps}")
        extras = []
        if t.skills:
            extras.append("skills " + ", ".join(t.skills))
        if t.scope:
            extras.append("scope " + ", ".join(t.scope))
        if t.checkpoint:
            extras.append("checkpoint")
        check = t.check.splitlines() if t.check else []
        if len(check) == 1:
            extras.append(f"check: {t.check}")
        if t.fallback:
            extras.append("fallback " + " → ".join(t.fallback))
        if extras:
            lines.append("      " + " · ".join(extras))
        if len(check) > 1:  # every line of it inside the task's block: `sh -c` runs them all
            lines.append(f"      check ({len(check)} lines, run as one script):")
            lines.extend(f"      | {line}" for line in check)
    for q in doc.questions:
        lines.append(f"  ? {q.question} — {q.answer or 'recommended: ' + q.recommendation}")
    return shown("\n".join(lines))  # a stored plan's invisible code points, written out


def cmd_plan(args: Namespace) -> int:
    _refuse_options_alone(args)
    ws = api.open_workspace()
    if args.from_file:
        text, source = _read_source(args.from_file)
        row = api.load_plan(ws, text, source, new=args.new)
        if args.json:
            print(json.dumps(row.doc, indent=2))
        else:
            print(f"plan {row.slug}: {counted(len(row.doc['tasks']), 'task')} loaded, not "
                  "approved — review with `baton plan`, then `baton approve`")
        return 0
    if args.goal or args.answer or args.yes:
        return _plan_with_planner(ws, args)
    return _print_current(ws, args.json)


def _refuse_options_alone(args: Namespace) -> None:
    """An empty --goal or --from, or --new or --skill without what they go with, would
    print the current plan as if nothing had been asked: say so instead."""
    if args.goal is not None and not args.goal.strip():
        raise BatonError('--goal is empty: say what you want built, such as `baton plan --goal '
                         '"add rate limiting to the API"`')
    if args.from_file is not None and not args.from_file.strip():
        raise BatonError("--from is empty: name a plan file (or - to read it from stdin)")
    if getattr(args, "skill", None) and args.goal is None:
        raise BatonError(f"--skill {args.skill} goes with --goal: `baton plan --goal \"…\" "
                         f"--skill {args.skill}`")
    if args.new and args.goal is None and args.from_file is None:
        raise BatonError("--new goes with --goal or --from: it archives the current plan as "
                         "the new one is made")


def _print_current(ws: api.Workspace, as_json: bool, hint: str | None = None) -> int:
    """The current plan as the v1 document (`--json`) or as a person reads it."""
    cur = api.current_plan(ws)
    assert cur is not None  # required: no plan is refused
    if as_json:
        print(json.dumps(cur.doc.dump(), indent=2))
        return 0
    print(render_plan(cur.doc, cur.row.approved, cur.row.slug))
    if hint:
        print(hint)
    return 0


def _convert(field: str, value: str) -> object:
    if field == "depends_on":
        return api.parse_ids(value)
    if field in ("scope", "skills", "fallback"):
        return api.parse_list(value)
    if field == "checkpoint":
        if value not in ("on", "off"):
            raise BatonError(f"checkpoint takes on or off, not {value!r}")
        return value == "on"
    return value  # (a model, effort or check of "", "default" or "none" is unset by the edit)


def cmd_task_field(args: Namespace) -> int:
    ws = api.open_workspace()
    value = _convert(args.field, args.value)
    doc = api.edit_task(ws, args.id, args.field, value)
    task = doc.task(args.id)
    now = getattr(task, args.field)
    extra = f" (model {task.model or 'default'}, effort {task.effort or 'default'})" \
        if args.field == "player" else ""
    lines = now.splitlines() if isinstance(now, str) else []
    if len(lines) > 1:  # every line said, on one line (quoted, `\n` between)
        extra = f" ({len(lines)} lines){extra}"
    said = now if isinstance(now, str) and len(lines) <= 1 else json.dumps(now,
                                                                        ensure_ascii=False)
    print(shown(f"task {args.id}: {args.field.replace('depends_on', 'deps')} = {said}{extra}"))
    if args.field in ("model", "player"):
        for note in api.model_notes(ws, doc, args.id):
            print(f"baton: note: {note}", file=sys.stderr)
    return 0


def cmd_task_prompt(args: Namespace) -> int:
    ws = api.open_workspace()
    text = args.text if args.text is not None else sys.stdin.read()
    if not text.strip():
        raise BatonError("the prompt is empty: pass --text or pipe the prompt on stdin")
    api.edit_task(ws, args.id, "prompt", text)
    print(f"task {args.id}: prompt set ({len(text)} characters)")
    return 0


def cmd_task_add(args: Namespace) -> int:
    ws = api.open_workspace()
    new_id = api.add_task(ws, args.title, args.player, args.mode, api.parse_ids(args.deps),
                          args.text)
    print(f"task {new_id} added")
    return 0


def cmd_task_remove(args: Namespace) -> int:
    ws = api.open_workspace()
    api.remove_task(ws, args.id)
    print(f"task {args.id} removed")
    return 0


def cmd_approve(args: Namespace) -> int:
    ws = api.open_workspace()
    row, warnings = api.approve(ws)
    for warning in warnings:
        print(f"baton: warning: {warning}", file=sys.stderr)
    where = f" onto {row.base_branch} at {row.base_commit[:10]}" if row.base_commit else ""
    print(f"plan {row.slug} approved{where} — start it with `baton run`")
    return 0


def cmd_autonomy(args: Namespace) -> int:
    ws = api.open_workspace()
    if args.level:
        api.set_autonomy(ws, args.level)
        print(f"autonomy {args.level} — applies from the next decision on")
    else:
        print(api.current_doc(ws).autonomy)
    return 0


def parse_answers(groups: list[list[str]]) -> dict[int, str]:
    """`--answer 1 "text"` (repeatable), or `--answer FILE` holding `N: text` lines."""
    answers: dict[int, str] = {}
    for group in groups:
        if len(group) == 1:
            if group[0].isdigit() and not os.path.exists(group[0]):
                raise BatonError(f"--answer {group[0]} needs the answer too: --answer "
                                 f"{group[0]} \"…\" (or --answer FILE of `N: text` lines)")
            text, source = _read_source(group[0])
            for number, line in enumerate(text.splitlines(), 1):
                if not line.strip():
                    continue
                head, sep, rest = line.partition(":")
                if not sep or not head.strip().isdigit():
                    raise BatonError(f"{source}: line {number}: write answers as `N: text`")
                answers[int(head)] = rest.strip()
            continue
        if len(group) != 2 or not group[0].isdigit():
            raise BatonError("--answer takes a question number and the answer: --answer 1 \"…\"")
        answers[int(group[0])] = group[1]
    return answers


def _print_questions(questions: list[dict]) -> None:
    print("The planner has questions (answer with `baton plan --answer N \"…\"`, or `baton plan "
          "--yes` to take every recommendation):")
    for number, q in enumerate(questions, 1):
        if q.get("answer") is None:
            print(f"  {number}. {shown(q['question'])}")
            if q.get("recommendation"):
                print(f"     Recommendation: {shown(q['recommendation'])}")


def _plan_with_planner(ws: api.Workspace, args: Namespace) -> int:
    def show(event: Any) -> None:
        if event.kind == "spec":  # --skill to-spec: the spec the plan is built against
            print(f"spec:\n{event.text}\n", flush=True)
        elif event.kind in ("step", "repair"):
            label = "planner" if event.kind == "step" else "repair"
            print(f"  {label}: {event.text}", file=sys.stderr, flush=True)

    if args.goal:
        result = api.plan_goal(ws, args.goal, new=args.new, emit=show,
                               skill=getattr(args, "skill", None))
    else:
        result = api.plan_answer(ws, parse_answers(args.answer or []), args.yes, emit=show)
    if result.status == "questions":
        session = api.planner_session(ws)
        _print_questions(session.get("questions", result.questions))
        return 3
    if result.status == "failed":
        raise BatonError(result.message, code=1)
    return _print_current(ws, args.json, "\nnot approved — edit any field, then `baton approve`")
