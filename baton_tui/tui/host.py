"""What the App's collaborators may use of it, declared once.

The plan keys (`actions.py`), the chat (`conversation.py`) and the handoff screen act on the
App that holds them. They import this protocol, never `app.py` (which imports them): a type
is a dependency too. `BatonApp` is its one implementation, checked against it where the App
hands itself to them (`TaskActions(self)`, `slash(self, …)`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Coroutine, Protocol, TypeVar

if TYPE_CHECKING:
    from textual.binding import Binding
    from textual.message import Message
    from textual.notifications import SeverityLevel
    from textual.screen import Screen
    from textual.worker import Worker

    from baton_tui.api import PlayerFacts, Snapshot, Workspace
    from baton_tui.tui.engine import EngineThread
    from baton_tui.tui.planner_port import Planner, PlannerQuestion
    from baton_tui.tui.widgets.chat_pane import ChatPane
    from baton_tui.tui.widgets.plan_pane import PlanPane

ResultT = TypeVar("ResultT")


class Host(Protocol):
    """The App's state the collaborators share and the App's methods they call."""

    # Set by the App (in `__init__`, the panes in `compose`); read by the collaborators.
    ws: Workspace  # the repository the engine works on (`api.open_workspace`)
    board: Snapshot  # the newest board the poller read
    engine: EngineThread
    planner: Planner | None
    chat: ChatPane
    plan_pane: PlanPane
    blink: bool
    follow_logs: bool
    keymap: dict[str, str]  # `[keys]` remapping: binding id -> keys
    # Also set by the collaborators.
    detections: dict[str, Any] | None  # the players found (None: not looked for yet)
    player_facts: PlayerFacts | None  # the plan's players' catalogs and capabilities
    pending_question: PlannerQuestion | None  # the planner's question waiting for an answer
    select_after_refresh: int | None  # a task added: the cursor goes there

    # Baton's own
    async def engine_call(self, what: str, fn: Callable[..., Any], *args: Any,
                          **kwargs: Any) -> tuple[bool, Any]: ...
    def why_not(self, action: str) -> str | None: ...
    def poke(self) -> None: ...
    def refresh_player_facts(self) -> None: ...
    def run_shell(self, banner: str) -> int: ...

    # Textual's `App`, as far as they use it
    def run_worker(self, work: Coroutine[Any, Any, None], name: str | None = "",
                   group: str = "default", description: str = "",
                   exit_on_error: bool = True) -> Worker[None]: ...
    def push_screen(self, screen: Screen[ResultT],
                    callback: Callable[[ResultT | None], None] | None = None) -> object: ...
    async def push_screen_wait(self, screen: Screen[ResultT]) -> ResultT: ...
    async def run_action(self, action: str) -> bool: ...
    def notify(self, message: str, *, title: str = "",
               severity: SeverityLevel = "information", timeout: float | None = None) -> None: ...
    def post_message(self, message: Message) -> bool: ...
    def get_key_display(self, binding: Binding) -> str: ...
    def bell(self) -> None: ...
