"""The agent loop itself: ask the model, run the tools it calls, repeat until it stops.

`main` is what `python -m baton_tui.native_agent` runs. It owns the process: the
command line, the signal handlers (which kill the shell's child first), the transcript saved
after every turn so `--resume` can continue it, and the per-turn `usage` and final `result`
events. Exit 0 after the final answer (the report decides done), `RATE_LIMITED_EXIT` on a 429,
1 on any other failure.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import uuid
from pathlib import Path
from typing import Any

from baton_tui.core.words import Mode
from baton_tui.native_agent.limits import call_with_retries
from baton_tui.native_agent.pricing import cost_of
from baton_tui.native_agent.providers import MAX_TOKENS, make_provider
from baton_tui.native_agent.specs import ToolError, summarize
from baton_tui.native_agent.tools import Toolbox
from baton_tui.native_agent.wire import Call, Usage, emit

MAX_TURNS = 60

SYSTEM = """You are a coding agent that Baton (an approval-first conductor) started on one task.
Your working directory is your own git worktree: {root}. Every path you give a tool is relative
to it (or absolute inside it); anything outside it is refused.
Mode: {mode}.{mode_note}
Tools: {tools}.
Where the task's rules tell you to run `baton report …` or `baton checkpoint …`, call the
`baton_report` / `baton_checkpoint` tools instead: they are the same channel. Reporting done or
failed is the only way the task counts as finished. When you have reported, end your turn with a
short final message."""

BUILD_NOTE = (" Make the change with write_file / edit_file; run_command is your shell in the "
              "worktree (tests, linters). Do not commit, push or switch branches.")
RESEARCH_NOTE = (" READ-ONLY: read, list and search; you have no tool that edits. Where you have "
                 "run_command you may run commands (tests, linters): this worktree is thrown "
                 "away and nothing written in it lands. Put your findings in the baton_report "
                 "summary.")


def _save(path: Path, data: dict) -> None:
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(data, fh, ensure_ascii=False)
    os.replace(tmp, path)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m baton_tui.native_agent",
                                description="Baton's native agent loop (one task, one worktree).")
    p.add_argument("--provider", choices=("anthropic", "openai"), required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--mode", choices=(Mode.BUILD, Mode.RESEARCH), default=Mode.BUILD)
    p.add_argument("--prompt-file", required=True, type=Path)
    p.add_argument("--transcript", required=True, type=Path)
    p.add_argument("--effort", choices=tuple(MAX_TOKENS), default=None)
    p.add_argument("--resume", type=Path, default=None,
                   help="continue the session saved in this transcript")
    p.add_argument("--resume-message", default=None)
    p.add_argument("--max-turns", type=int, default=MAX_TURNS)
    p.add_argument("--cwd", type=Path, default=None, help="the worktree (default: the cwd)")
    p.add_argument("--no-shell", action="store_true",
                   help="no run_command (the planner, in the person's own checkout)")
    return p


def _open_session(args: argparse.Namespace, provider: Any) -> tuple[dict[str, Any], bool]:
    """The transcript state to run from, and whether it continues a previous session."""
    state: dict[str, Any] | None = None
    if args.resume is not None:
        try:
            state = json.loads(args.resume.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            emit("text", text=f"cannot resume from {args.resume} ({exc}); starting afresh")
            state = None
    if state is None or state.get("provider") != args.provider:
        prompt = args.prompt_file.read_text(encoding="utf-8")
        state = {"version": 1, "id": str(uuid.uuid4()), "provider": args.provider,
                 "messages": [provider.user_message(prompt)], "turns": 0}
        return state, False
    provider.add_user_text(state["messages"], args.resume_message
                           or "Continue the task where you left off.")
    return state, True


def _run_tools(toolbox: Toolbox, calls: list[Call]) -> list[tuple[Call, str, bool]]:
    """Carry out one turn's tool calls: (call, output, is_error) each, logged as `tool`."""
    results: list[tuple[Call, str, bool]] = []
    for call in calls:
        if call.bad_json:
            output, error = f"the arguments of {call.name} are not valid JSON", True
        else:
            try:
                output, error = toolbox.call(call.name, call.args), False
            except ToolError as exc:
                output, error = str(exc), True
            except (OSError, ValueError, TypeError) as exc:
                output, error = f"{call.name} failed: {exc}", True
        emit("tool", name=call.name, summary=summarize(call.name, call.args), ok=not error,
             output=output[:300])
        results.append((call, output, error))
    return results


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    root = (args.cwd or Path.cwd()).resolve()
    toolbox = Toolbox(root, args.mode, shell=not args.no_shell)

    def on_signal(signum: int, _frame: Any) -> None:
        toolbox.kill_child()
        emit("stopped", signal=signum)
        os._exit(128 + signum)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)

    try:
        provider: Any = make_provider(args.provider, args.model, args.effort)
    except Exception as exc:  # missing SDK, bad key format
        emit("error", status=None, reset=None, message=f"cannot start the {args.provider} "
             f"client: {exc}")
        return 1

    state, resumed = _open_session(args, provider)
    state.update(model=args.model, mode=args.mode)
    session = state["id"]
    messages: list[dict] = state["messages"]
    _save(args.transcript, state)
    emit("init", session_id=session, provider=args.provider, model=args.model, mode=args.mode,
         resumed=resumed, cwd=str(root), tools=list(toolbox.names))

    system = SYSTEM.format(root=root, mode=args.mode, tools=", ".join(toolbox.names),
                           mode_note=RESEARCH_NOTE if args.mode == Mode.RESEARCH else BUILD_NOTE)
    tools = provider.tools(toolbox.names)
    total = Usage()
    cost = 0.0
    turns = 0
    final_text = ""

    def result(stop: str) -> int:
        emit("result", session_id=session, stop=stop, turns=turns, final_text=final_text,
             tokens=total.input_tokens + total.output_tokens, cost=round(cost, 6))
        return 0

    while True:
        if turns >= args.max_turns:
            return result("max_turns")
        reply = call_with_retries(provider, system, messages, tools, session)
        if isinstance(reply, int):
            return reply
        turns += 1
        state["turns"] = state.get("turns", 0) + 1
        turn_cost = cost_of(args.model, reply.usage)
        cost += turn_cost
        for name in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"):
            setattr(total, name, getattr(total, name) + getattr(reply.usage, name))
        emit("usage", input_tokens=reply.usage.input_tokens,
             output_tokens=reply.usage.output_tokens,
             cache_read_tokens=reply.usage.cache_read_tokens,
             cache_write_tokens=reply.usage.cache_write_tokens, cost=round(turn_cost, 8),
             model=args.model)
        if reply.text:
            final_text = reply.text
            emit("text", text=reply.text)
        messages.append(reply.message)
        if not reply.calls:
            _save(args.transcript, state)
            return result("end_turn")
        provider.add_results(messages, _run_tools(toolbox, reply.calls))
        _save(args.transcript, state)
