"""Running: starting, resuming and pausing the run; one task's stop, retry, take-over, done and
checkpoint answer; the budget."""

from __future__ import annotations


from baton_tui.core.errors import BatonError
from baton_tui.run import early as _early  # stdlib only: it starts before our own imports

TYPE_CHECKING = False  # `typing` stays unimported until `baton run`'s early conductor started
if TYPE_CHECKING:
    from typing import Any

    from baton_tui.run.early import Early
    from baton_tui.workspace import Workspace


def conductor_ahead() -> "Early":
    """A conductor started now, ahead of the run a front end is about to start: its start-up
    overlaps the front end's own (opening the repository, approving). A context manager;
    hand it to `start_run(early=…)`, which cues it — left uncued, it ends having done
    nothing. The one the CLI started before parsing its arguments, when it did."""
    return _early.taken()


class _First:
    def __enter__(self) -> None:
        _early.start_first()

    def __exit__(self, *exc: object) -> None:
        _early.drop_untaken()  # a usage error or a refusal took none: it ends uncued


def conductor_first() -> _First:
    """`with conductor_first(): …` — `baton run`/`resume` start their conductor before the CLI
    parses its arguments (its imports then overlap all of the CLI's); `conductor_ahead` hands
    it over, and one left untaken ends uncued."""
    return _First()


def deadline_problem(text: str) -> str | None:
    """Why `text` is no deadline (a clock time or a duration), or None: checked before a
    command records anything."""
    from baton_tui.config import deadline_at  # lazy: pydantic, and only when the option is given

    try:
        deadline_at(text, 0.0)
    except ValueError as exc:
        return str(exc)
    return None


def start_run(ws: "Workspace", approve: bool = False, until_failures: int | None = None,
              deadline: str | None = None, early: "Early | None" = None) -> int:
    """Start (or attach to) the run; stop conditions as `run --until-failures --deadline`."""
    from baton_tui.run import control  # lazy: `baton run` starts its early conductor before this loads

    return control.start_run(ws, approve=approve, until_failures=until_failures,
                             deadline=deadline, early=early)


def resume_run(ws: "Workspace", early: "Early | None" = None) -> int:
    from baton_tui.run import control  # lazy: `baton run` starts its early conductor before this loads

    return control.resume_run(ws, early)


def pause_run(ws: "Workspace") -> None:
    from baton_tui.run import control  # lazy: `baton run` starts its early conductor before this loads

    control.pause_run(ws)


def ensure_trusted(ws: "Workspace") -> None:
    """Refuse when the current plan would run commands from an untrusted baton.toml."""
    # lazy: `baton run` starts its early conductor before this loads
    from baton_tui.plan.current import current
    from baton_tui.run import control  # lazy: `baton run` starts its early conductor before this loads

    cur = current(ws)
    assert cur is not None
    control.ensure_trusted(ws, cur)


def start_task(ws: "Workspace", task_id: int) -> int:
    from baton_tui.run import control  # lazy: `baton run` starts its early conductor before this loads

    return control.start_task(ws, task_id)


def take_task(ws: "Workspace", task_id: int) -> dict[str, Any]:
    """Stop a task's agent with its session saved; its worktree, player and session id."""
    from baton_tui.run import control  # lazy: `baton run` starts its early conductor before this loads

    return control.take_task(ws, task_id)


def wait_stopped(ws: "Workspace", task_id: int, timeout: float = 30.0
                 ) -> tuple[str, str | None]:
    """Wait for a taken-over task's agent to stop: its state and saved session id."""
    from baton_tui.run import control  # lazy: `baton run` starts its early conductor before this loads

    return control.wait_stopped(ws, task_id, timeout)


def interactive_argv(ws: "Workspace", player: str, session: str | None) -> list[str] | None:
    """The player's own interactive session, resumed (None: it has none; a shell then). Its
    command may come from the repository's baton.toml: refused, as every other path refuses,
    until the person trusts the file as it is."""
    from baton_tui.trust import ensure_trusted as ensure  # lazy: only `baton take` needs it

    found = ws.catalog.players.get(player)
    if found is None:
        return None
    ensure(ws, {player}, keys=())
    return found.interactive(session)


def set_budget(ws: "Workspace", tokens: int | None = None, cost: float | None = None,
               seconds: float | None = None) -> dict[str, Any]:
    from baton_tui.run import control  # lazy: `baton run` starts its early conductor before this loads

    return control.set_budget(ws, tokens, cost, seconds)


def parse_duration(text: str) -> float:
    # lazy: `baton run` starts its early conductor before this loads
    from baton_tui.config import parse_duration as parse

    try:
        return parse(text)
    except ValueError as exc:
        raise BatonError(f"{text!r}: {exc}") from None


def stop_task(ws: "Workspace", task_id: int) -> None:
    from baton_tui.run import control  # lazy: `baton run` starts its early conductor before this loads

    control.stop_task(ws, task_id)


def retry_task(ws: "Workspace", task_id: int, feedback: str | None = None) -> int | None:
    """Queue the task again and start the conductor (its pid); None: it waits for the plan's
    approval (an edit voided it)."""
    from baton_tui.run import control  # lazy: `baton run` starts its early conductor before this loads

    return control.retry_task(ws, task_id, feedback)


def tell(ws: "Workspace", task_id: int, text: str) -> str:
    """A message for a task's agent, read at its next turn; returns how it will reach it."""
    from baton_tui.run import control  # lazy: `baton run` starts its early conductor before this loads

    return control.tell(ws, task_id, text)


def mark_done(ws: "Workspace", task_id: int) -> None:
    from baton_tui.run import control  # lazy: `baton run` starts its early conductor before this loads

    control.mark_done(ws, task_id)


def answer_checkpoint(ws: "Workspace", task_id: int, yes: bool) -> None:
    from baton_tui.run import control  # lazy: `baton run` starts its early conductor before this loads

    control.answer_checkpoint(ws, task_id, yes)


def last_run_code(ws: "Workspace") -> int | None:
    from baton_tui.run import control  # lazy: `baton run` starts its early conductor before this loads

    return control.last_run_code(ws)


def conductor_alive(pid: int, token: float | None) -> bool:
    from baton_tui import procs  # lazy: `baton run` starts its early conductor before this loads

    return procs.alive(pid, token)


def wait_conductor(pid: int, seconds: float) -> None:
    """Wait up to `seconds` for the conductor `pid` to exit (at once when it does)."""
    from baton_tui import procs  # lazy: `baton run` starts its early conductor before this loads

    procs.wait_exit(pid, seconds)


def process_token(pid: int) -> float | None:
    from baton_tui import procs  # lazy: `baton run` starts its early conductor before this loads

    return procs.start_token(pid)
