"""What an agent's own process calls — `baton report`, `baton checkpoint`, `baton inbox` and
their MCP tools: over the attempt's channel (`relay`) where it has one, else straight to the
store (`report`), else queued in the attempt's folder. Standard library only.

Its own module so the two it joins never import each other: the channel's server (in the shim)
calls `report`, and this calls the channel.
"""

from __future__ import annotations

import os

from baton_tui.channel import relay
from baton_tui.channel.report import (
    UNDECIDED, caller_from_env, checkpoint, inbox, queued_payload, report,
)
from baton_tui.core.errors import BatonError
from baton_tui.core.words import ReportStatus


def report_from_env(status: str, message: str | None, *, until: float | None = None,
                    tokens: int | None = None, cost: float | None = None,
                    env: dict[str, str] | None = None) -> str:
    """`baton report` (and the MCP tool) for the attempt the environment names: over its
    channel (`relay`) where it has one, else straight to the store; a channel that cannot be
    reached queues a finished report in the attempt's folder."""
    env = dict(os.environ if env is None else env)
    answer = relay.ask(env, {"op": "report", "status": status, "message": message,
                             "until": until, "tokens": tokens, "cost": cost})
    if answer is not None:
        if answer.get("ok"):
            return str(answer.get("message"))
        raise BatonError(str(answer.get("message")), code=_code(answer))
    if _direct(env, relay.ENV):
        return report(caller_from_env(env), status, message, until=until, tokens=tokens,
                      cost=cost)
    # Its channel is gone (its shim ended while it ran on), and the store is read-only here.
    if status == ReportStatus.PROGRESS:
        return "progress not recorded (Baton's channel is not there); carry on"
    payload = queued_payload(status, message, until)
    if relay.queue(env, payload) is None:
        raise BatonError("report not recorded: Baton's channel is not there and the attempt's "
                         "folder cannot be written", code=1)
    return (f"Baton queued your report ({status}); it is applied when your attempt ends. "
            "End your turn now.")


def checkpoint_from_env(what: str, evidence: str | None, env: dict[str, str] | None = None,
                        wait: float | None = None) -> tuple[int, str]:
    """`baton checkpoint` (and the MCP tool) for the attempt the environment names; `wait`:
    seconds to wait for the person (None: the plan's checkpoint_wait)."""
    env = dict(os.environ if env is None else env)
    answer = relay.ask(env, {"op": "checkpoint", "what": what, "evidence": evidence,
                             "wait": wait}, timeout=None if wait is None else wait + 30)
    if answer is not None:
        if answer.get("ok"):
            return _code(answer), str(answer.get("message"))
        raise BatonError(str(answer.get("message")), code=_code(answer))
    if not _direct(env, relay.ENV):
        return UNDECIDED, ("Baton's channel is not there: end your turn now without taking "
                           "the step")
    return checkpoint(caller_from_env(env), what, evidence, wait)


def inbox_from_env(env: dict[str, str] | None = None) -> str:
    """`baton inbox` (and the MCP tool) for the attempt the environment names: through its
    channel where the store is read-only to it (reading marks the messages read)."""
    env = dict(os.environ if env is None else env)
    answer = relay.ask(env, {"op": "inbox"})
    if answer is not None:
        if answer.get("ok"):
            return str(answer.get("message"))
        raise BatonError(str(answer.get("message")), code=_code(answer))
    return inbox(caller_from_env(env))


def _direct(env: dict[str, str], channel_var: str) -> bool:
    """Whether a report without its channel goes straight to the store, as before there were
    channels: no channel named, or a store this process may write (outside the read-only
    view: a stale or foreign report is then refused and logged there)."""
    return not env.get(channel_var) or os.access(env.get("BATON_STATE") or "", os.W_OK)


def _code(answer: dict) -> int:
    code = answer.get("code")
    return code if isinstance(code, int) else 1
