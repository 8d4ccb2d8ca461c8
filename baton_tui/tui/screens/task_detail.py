"""Task detail: the card's fields, the agent's work as readable steps (the raw output one key
away), the report and check, the diff.

The steps come from the player's own event stream, read in the log-tail worker (never on the
event loop); the raw lines stay on disk and in the raw view.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Log, Static, TabbedContent, TabPane
from textual.worker import get_current_worker

from baton_tui import api
from baton_tui.api import TaskSnap
from baton_tui.tui.messages import BoardChanged, OutputRead
from baton_tui.tui.poller import tail_log
from baton_tui.tui.widgets.diff_view import DiffView
from baton_tui.tui.widgets.steps_view import StepsView
from baton_tui.tui.widgets.task_card import card_text

# Lines kept on screen; the whole log stays on disk (`baton logs N`).
MAX_LINES = 1_000


def fields_text(task: TaskSnap) -> Text:
    text = card_text(task)
    text.append("\n\n")
    text.append("prompt\n", style="bold")
    text.append(task.prompt or "(empty)")
    return text


class TaskDetail(Screen[None]):
    """Full screen for one task; its workers (log tail, loaders) end when it is popped."""

    BINDINGS = [Binding("escape,q", "close", "back", id="detail-back"),
                Binding("1", "tab('output')", "steps", id="tab-output"),
                Binding("2", "tab('report')", "report", id="tab-report"),
                Binding("3", "tab('diff')", "diff", id="tab-diff"),
                Binding("r", "toggle_raw", "raw output", id="toggle-raw")]  # r: Raw

    def __init__(self, task: TaskSnap, plan_id: int, base_commit: str | None,
                 store_path: Path, root: Path, follow: bool = True) -> None:
        super().__init__()
        self.row = task
        self.plan_id = plan_id
        self.base_commit = base_commit
        self.store_path = store_path
        self.root = root
        self.follow = follow
        self.data: Any = None
        self.raw = False

    def compose(self) -> ComposeResult:
        with Vertical(id="detail"):
            fields = VerticalScroll(Static(fields_text(self.row), id="fields"), id="fields-box")
            fields.border_title = f"task #{self.row.id}"
            yield fields
            with TabbedContent(initial="output", id="detail-tabs"):
                with TabPane("steps", id="output"):
                    yield Static("", id="touched")
                    yield StepsView(id="steps")
                    log = Log(max_lines=MAX_LINES, id="log")
                    log.display = False
                    yield log
                with TabPane("report & check", id="report"):
                    yield VerticalScroll(Static("loading…", id="report-text"))
                with TabPane("diff", id="diff"):
                    yield DiffView(id="diff-text")
        yield Footer()

    def on_mount(self) -> None:
        self.load()
        if self.follow:
            self.run_worker(partial(self._tail), thread=True, group="detail-tail",
                            exclusive=True, exit_on_error=False,
                            description=f"follow output of task {self.row.id}")

    def _tail(self) -> None:
        worker = get_current_worker()
        task_id = self.row.id
        tail_log(self.store_path, self.plan_id, task_id,
                 lambda lines, reset, steps: self.post_message(
                     OutputRead(task_id, lines, reset, steps)),
                 lambda: worker.is_cancelled, player=self.row.player)

    @work(thread=True, group="detail-load", exclusive=True, exit_on_error=False,
          description="read report, check and diff")
    def load(self) -> Any:
        data = api.task_detail(self.store_path, self.root, self.plan_id, self.row.id,
                               self.base_commit, self.row.branch)
        self.app.call_from_thread(self.show_data, data)
        return data

    def show_data(self, data: Any) -> None:
        self.data = data
        self.query_one("#report-text", Static).update(Text(data.report + "\n\n" + data.check))
        self.query_one(DiffView).show(data.diff)
        if data.log_path is None:
            log = self.query_one(Log)
            if not log.line_count:
                log.write_line("no output yet: the task has not run")
            steps = self.query_one(StepsView)
            if not steps.count:
                steps.write(Text("no steps yet: the task has not run", style="dim"))

    @on(OutputRead)
    def show_output(self, event: OutputRead) -> None:
        log = self.query_one(Log)
        steps = self.query_one(StepsView)
        if event.reset:
            log.clear()
            steps.reset()
        if event.lines:
            log.write_lines(event.lines)
        if event.steps:
            before = len(steps.files)
            steps.add(event.steps)
            if len(steps.files) != before:
                self.query_one("#touched", Static).update(Text(
                    "files touched: " + ", ".join(steps.files), style="dim"))

    def refresh_task(self, board_changed: BoardChanged) -> None:
        row = board_changed.board.task(self.row.id)
        if row is not None and row != self.row:
            self.row = row
            for fields in self.query("#fields").results(Static):  # none while composing
                fields.update(fields_text(row))

    def action_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab

    def action_toggle_raw(self) -> None:
        """Readable steps or the raw output, as the agent wrote it."""
        self.raw = not self.raw
        self.query_one(Log).display = self.raw
        self.query_one(StepsView).display = not self.raw
        self.query_one("#touched").display = not self.raw
        self.query_one(TabbedContent).active = "output"
        self.query_one(TabbedContent).get_tab("output").label = "raw output" if self.raw \
            else "steps"

    def action_close(self) -> None:
        self.dismiss(None)
