"""The handoff: read the combined diff, then merge it home — all of it or up to a task —
discard a task, and finish a conflicting merge in a shell without leaving the app.

Every step goes through the façade on the engine thread; what may be done now is the rule
book's (`merge`, `discard`), so the keys dim with the CLI's own sentences. Merges run as
App workers: going back mid-merge does not cancel one.
"""

from __future__ import annotations

import asyncio
import textwrap
from typing import Any, cast

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import RichLog, Static, Tree

from baton_tui import api
from baton_tui.api import Action
from baton_tui.core.events import LANDED, State
from baton_tui.tui.bindings import HANDOFF, keys_of
from baton_tui.tui.host import Host
from baton_tui.tui.messages import HandoffLoaded, MergeFinished, MergeProgressed, MergeStopped
from baton_tui.tui.screens.file_diff import FileDiffScreen
from baton_tui.tui.screens.pickers import ConfirmModal
from baton_tui.tui.widgets.diff_view import DiffView
from baton_tui.tui.widgets.handoff_tree import Entry, details_text, fill
from baton_tui.tui.widgets.key_bar import KeyBar
from baton_tui.tui.words import counted

RULES = {"merge_all": Action.MERGE, "merge_upto": Action.MERGE, "discard": Action.DISCARD,
         "retry": Action.RETRY_TASK}


def summary_text(review: Any) -> Text:
    text = Text(no_wrap=True, overflow="ellipsis")
    merged = sum(t.state == State.MERGED for t in review.tasks)
    text.append(f" {counted(len(review.tasks), 'landed task')}", style="bold")
    text.append(f" · {counted(len(review.files), 'file')} · +{review.added} −{review.deleted}")
    text.append(f" · onto {review.onto}" if review.onto else "")
    if merged:
        text.append(f" · {merged} merged", style="bold")
    if review.waiting:
        text.append(f" · {len(review.waiting)} not landed", style="italic")
    return text


NAMED = 6  # tasks the merge question names one by one

HANDOFF_GROUPS = (
    ("merging onto your branch", ("merge-all", "merge-upto", "resolve-shell")),
    ("the selected task or file", ("full-diff", "handoff-discard", "handoff-retry")),
    ("moving", ("handoff-help", "handoff-back")),
)
HANDOFF_SCHEME = ("The handoff: read the landed work (enter folds a task or opens a file), "
                  "then merge it home. M merges every landed task, u up to the selected one; "
                  "a conflict stops the merge with your tree untouched, and s finishes it in "
                  "your shell.")


def merge_question(review: Any, upto: int | None) -> str:
    """What `M` (or `u` up to a task) is about to merge onto which branch, for a yes or no."""
    tasks = list(review.tasks) if review is not None else []
    ids = [t.id for t in tasks]
    if upto in ids:
        tasks = tasks[: ids.index(upto) + 1]
    waiting = [t for t in tasks if t.state != State.MERGED]
    onto = review.onto if review is not None and review.onto else "your branch"
    if not waiting:
        return f"Merge the landed work onto {onto}?"
    n = len(waiting)
    named = "\n".join(f"  #{t.id} {t.title}" + (f" ({t.branch})" if t.branch else "")
                      for t in waiting[:NAMED])
    if n > NAMED:  # the dialog fits the screen: the rest are counted
        named += f"\n  … and {n - NAMED} more, up to #{waiting[-1].id} {waiting[-1].title}"
    ids = [t.id for t in waiting]
    order = ("in this order" if ids == sorted(ids) else
             "in this order — plan order, except that a task whose branch already carries "
             "another's work comes after that work")
    return (f"Merge {n} task{'s' * (n != 1)} onto {onto}, each as its own merge commit, "
            f"{order}?\n{named}\nA task that conflicts stops the merge before anything of it "
            "is written; your tree stays as it was.")


class HandoffScreen(Screen[None]):
    """Opened by `H`, or by itself when a run ends with work landed."""

    BINDINGS = [*HANDOFF]  # ids remappable in `[keys]`, as the plan's are
    # The key bar's order: the step a stopped merge waits on first, then merging, then the
    # selected row's keys (at 80 columns the bar drops from the end, never `back`).
    # (`P`, publish, works without a place in the bar yet: the README names it.)
    NOW = ("shell", "merge_all", "merge_upto", "retry", "discard", "full_diff")

    def __init__(self, reading: "asyncio.Task | None" = None) -> None:
        super().__init__()
        self.reading = reading  # the review, already being read while the screen mounts
        self.review: Any = None
        self.conflict: dict | None = None
        self.upto: int | None = None
        self.merging = False
        self.expanded: set[int] = set()

    @property
    def host(self) -> Host:
        """The App, as the Baton App it is (Textual types `self.app` as any App)."""
        return cast(Host, self.app)

    def compose(self) -> ComposeResult:
        yield Static(" reading the landed work…", id="handoff-summary")
        with Horizontal(id="handoff-body"):
            tree: Tree[Entry] = Tree("landed work", id="handoff-tree")
            tree.show_root = False
            tree.auto_expand = False
            yield tree
            with Vertical(id="handoff-right"):
                yield DiffView(id="handoff-diff")
                yield RichLog(id="merge-log", wrap=True, markup=False, max_lines=200,
                              min_width=20)  # wraps at its own width, 80 columns too
        yield Static("", id="handoff-status")
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one(Tree).focus()
        self.show_keys()
        merge = self.shown_keys()["merge_all"][0]
        # after the first layout: the log wraps at the width it is written at
        self.call_after_refresh(self.note_line, f"The merge is written here, a line per "
                                f"task, once you press {merge}.", "dim")
        self.load()

    # reading ---------------------------------------------------------------------------
    @work(group="handoff-load", exclusive=True, exit_on_error=False, description="read the handoff")
    async def load(self) -> None:
        reading, self.reading = self.reading, None
        ok, review = await (reading or self.host.engine_call("handoff", api.handoff_review))
        if ok:
            self.post_message(HandoffLoaded(review))

    @on(HandoffLoaded)
    def show_review(self, event: HandoffLoaded) -> None:
        self.review = event.review
        tree = self.query_one(Tree)
        self.expanded = {n.data.task.id for n in tree.root.children
                         if n.data and n.data.kind == "task" and n.is_expanded} or self.expanded
        line = max(0, tree.cursor_line)
        fill(tree, self.review, self.expanded)
        self.call_after_refresh(self._place_cursor, line)
        self.query_one("#handoff-summary", Static).update(summary_text(self.review))
        self.query_one(DiffView).show(self.review.diff)
        self.show_keys()

    def _place_cursor(self, line: int) -> None:
        tree = self.query_one(Tree)
        if tree.last_line >= 0:
            tree.cursor_line = min(line, tree.last_line)

    def selected(self) -> Entry | None:
        node = self.query_one(Tree).cursor_node
        return node.data if node is not None else None

    def selected_task(self) -> Any:
        entry = self.selected()
        return entry.task if entry is not None else None

    @on(Tree.NodeHighlighted)
    def _highlighted(self, event: Tree.NodeHighlighted) -> None:
        entry = event.node.data
        if entry is None or self.review is None:
            return
        view = self.query_one(DiffView)
        if entry.kind == "file":
            view.show(entry.file.diff)
        elif entry.kind == "task":
            view.show("\n".join(f.diff for f in entry.task.files))
        elif entry.kind == "info" and entry.task is not None:  # its report, check … in full
            width = max(20, view.scrollable_content_region.width - 1)
            view.show("\n".join(textwrap.fill(line, width, replace_whitespace=False) or line
                                for line in details_text(entry.task).splitlines()))
        self.show_keys()

    @on(Tree.NodeSelected)
    def _selected(self, event: Tree.NodeSelected) -> None:
        entry = event.node.data
        if entry is not None and entry.kind == "file":
            self.app.push_screen(FileDiffScreen(entry.file.path, entry.file.diff))
        elif entry is not None and entry.kind == "task":
            event.node.toggle()

    # what applies now --------------------------------------------------------------------
    def why_not(self, action: str) -> str | None:
        board = self.host.board
        task = self.selected_task()
        if action in ("merge_all", "merge_upto") and self.merging:
            return "a merge is going on"
        if action == "merge_upto" and (task is None or task.state not in LANDED):
            return "select a landed task to merge up to"
        if action == "discard":
            return api.why_not(Action.DISCARD, board, board.task(task.id) if task else None,
                               with_dependents=True)
        if action == "retry":
            entry = self.selected()
            if entry is None or entry.kind != "waiting":
                return "select a task that has not landed to retry it"
            return api.why_not(Action.RETRY_TASK, board, board.task(entry.task.id))
        if action == "publish":  # (`baton handoff pr`: never automatic, only on this key)
            if self.merging:
                return "a merge is going on"
            if self.review is None or not any(t.state in LANDED for t in self.review.tasks):
                return "nothing has landed to publish"
            return None
        if action == "shell" and self.conflict is None:
            return "no merge is stopped at a conflict"
        if action == "full_diff":
            entry = self.selected()
            return None if entry is not None and entry.kind == "file" else "select a file"
        rule = RULES.get(action)
        return api.why_not(rule, board) if rule else None

    def shown_keys(self) -> dict[str, tuple[str, str]]:
        """Each action -> (its first key as shown, after `[keys]` remapping; its label)."""
        shown = {}
        for binding in self.BINDINGS:
            assert isinstance(binding, Binding)
            first = keys_of(binding, self.host.keymap)[0]
            shown[binding.action] = (self.app.get_key_display(Binding(first, binding.action)),
                                     binding.description)
        return shown

    def show_keys(self) -> None:
        """The key bar: the keys that apply now, most useful first (as the main screen's),
        and on its right, always, `?` for every key and `q` back."""
        shown = self.shown_keys()
        back = keys_of(HANDOFF[0], self.host.keymap)
        self.query_one(KeyBar).show([shown[a] for a in self.NOW if self.why_not(a) is None],
                                    [shown["help"], ("q", "back") if "q" in back
                                     else shown["close"]])

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "close":
            return True
        return None if self.why_not(action) else True

    def on_key(self, event) -> None:
        active = self.active_bindings.get(event.key)
        if active is not None and not active.enabled:
            reason = self.why_not(active.binding.action) or "not available now"
            self.notify(reason, title=f"{active.binding.description}: not now",
                        severity="warning", timeout=5)

    # merging -----------------------------------------------------------------------------
    def note_line(self, text: str, style: str = "") -> None:
        self.query_one("#merge-log", RichLog).write(Text(text, style=style))

    def action_merge_all(self) -> None:
        self.confirm_merge(None)

    def action_merge_upto(self) -> None:
        task = self.selected_task()
        if task is not None:
            self.confirm_merge(task.id)

    @work(group="handoff-confirm", exclusive=True, exit_on_error=False, description="merge?")
    async def confirm_merge(self, upto: int | None) -> None:
        """Merging writes onto the person's branch: name what and where, then ask."""
        onto = self.review.onto if self.review is not None and self.review.onto else None
        sure = await self.app.push_screen_wait(ConfirmModal(
            f"merge onto {onto}?" if onto else "merge?", merge_question(self.review, upto)))
        if sure and self.why_not("merge_upto" if upto else "merge_all") is None:
            self.start_merge(upto)

    def start_merge(self, upto: int | None) -> None:
        self.upto, self.conflict, self.merging = upto, None, True
        self.show_keys()
        self.note_line(f"merging {'up to task ' + str(upto) if upto else 'every landed task'} "
                       "in the order listed…", "bold")
        self.app.run_worker(self._merge(upto), group="handoff-merge", exit_on_error=False,
                            description="merge")

    async def _merge(self, upto: int | None) -> None:
        def progress(task_id: int, what: str) -> None:
            self.post_message(MergeProgressed(task_id, what))

        try:
            ok, outcome = await self.host.engine_call("merge", api.merge, upto, progress)
        finally:
            self.merging = False
        if not ok:
            self.note_line("the merge was refused (see the message)", "bold")
        elif outcome.conflict:
            self.post_message(MergeStopped(outcome.conflict))
        else:
            self.post_message(MergeFinished(
                outcome.merged, outcome.skipped, outcome.onto,
                [n for n in (outcome.recovered, *outcome.notes) if n], outcome.missing))
        if self.is_attached:
            self.load()

    @on(MergeProgressed)
    def _progressed(self, event: MergeProgressed) -> None:
        task = self.host.board.task(event.task_id)
        title = task.title if task else ""
        self.note_line(f"  ✓ #{event.task_id} {title} — "
                 + ("merged" if event.what == "merged" else "was merged already"))

    @on(MergeStopped)
    def _stopped(self, event: MergeStopped) -> None:
        c = self.conflict = event.conflict
        files = ", ".join(c["files"])
        self.note_line(f"  ✗ #{c['id']} conflicts with your branch in {files}", "bold")
        self.query_one("#handoff-status", Static).update(Text(
            f" stopped at task {c['id']}: {files} conflict · your tree is untouched · "
            "s: resolve it in a shell (Baton starts the merge), then the rest goes on",
            style="bold"))
        self.app.bell()
        self.show_keys()

    @on(MergeFinished)
    def _finished(self, event: MergeFinished) -> None:
        self.query_one("#handoff-status", Static).update(
            f" merged {counted(len(event.merged), 'task')} onto {event.onto}"
            + (f" · {len(event.skipped)} were merged already" if event.skipped else ""))
        done = {*event.merged, *event.skipped}
        left = [t.id for t in (self.review.tasks if self.review is not None else ())
                if t.state != State.MERGED and t.id not in done]
        if left:  # `u` stopped short of the end
            self.note_line(f"merged up to #{self.upto} onto {event.onto}; still to merge: "
                           f"{', '.join(f'#{i}' for i in left)} (M merges the rest)", "bold")
        for note in event.notes:
            self.note_line(f"note: {note}")
        for task_id, files in event.missing.items():
            self.note_line(f"  ✗ #{task_id}'s change is not in {event.onto}'s tree: "
                           f"{', '.join(files[:5])} back as before it (undone by a commit "
                           "since?)", "bold")
        if event.missing:
            self.note_line(f"{event.onto} does not hold all the landed work", "bold")
        elif not left:
            self.note_line(f"done: landed work is on {event.onto}", "bold")
        self.show_keys()

    # conflicts, discards, retries ---------------------------------------------------------
    @work(group="handoff-act", exclusive=True, exit_on_error=False, description="resolve")
    async def action_shell(self) -> None:
        conflict = self.conflict
        if conflict is None:
            return
        app = self.host
        ok, state = await app.engine_call("resolve", api.resolve_begin, conflict["id"])
        if not ok:
            return
        if state.open:
            banner = (f"\n── Baton: merging task {conflict['id']} ({state.branch}) onto your branch "
                      f"conflicts in: {', '.join(state.files)}\n   Edit those files, `git add` "
                      "them and `git commit`; then `exit` to go back to Baton (or "
                      "`git merge --abort` to give up).\n")
            app.run_shell(banner)
        ok, state = await app.engine_call("resolve", api.resolve_status, conflict["id"])
        if not ok:
            return
        if state.merged:
            self.note_line(f"  ✓ #{conflict['id']} merged by hand", "bold")
            self.start_merge(self.upto)
        elif state.open:
            self.query_one("#handoff-status", Static).update(Text(
                f" the merge of task {conflict['id']} is still open ({', '.join(state.files)}"
                " unresolved) · s: back to the shell to finish it", style="bold"))
        else:
            self.note_line("  the hand merge was given up; your tree is as it was", "italic")

    @work(group="handoff-act", exclusive=True, exit_on_error=False, description="discard")
    async def action_discard(self) -> None:
        task = self.selected_task()
        if task is None:
            return
        app = self.host
        ok, victims = await app.engine_call("discard", api.discard_victims, task.id)
        if not ok:
            return
        also = ("" if not victims else f" Task {victims[0]} was built on it and is discarded too."
                if len(victims) == 1 else f" Tasks {', '.join(map(str, victims))} were built on "
                "it and are discarded too.")
        sure = await app.push_screen_wait(ConfirmModal(
            "discard", f"Discard #{task.id} {task.title}? It will not be merged; its worktree's "
            f"last state is kept under refs/baton/… and its branch stays.{also}"))
        if not sure:
            return
        ok, done = await app.engine_call(f"discard #{task.id}", api.discard, task.id,
                                         bool(victims))
        if ok:
            for victim, ref in done:
                self.note_line(f"  – #{victim} discarded" + (f" (kept under {ref})" if ref else ""))
            self.load()

    @work(group="handoff-act", exclusive=True, exit_on_error=False, description="retry")
    async def action_retry(self) -> None:
        entry = self.selected()
        if entry is None or entry.kind != "waiting":
            return
        ok, _ = await self.host.engine_call(f"retry #{entry.task.id}", api.retry_task,
                                           entry.task.id, None)
        if ok:
            self.note_line(f"  ↻ #{entry.task.id} retried: the integration branch is merged into its "
                     "worktree first and the conflicting files are named to its agent")

    @work(group="handoff-act", exclusive=True, exit_on_error=False, description="publish")
    async def action_publish(self) -> None:
        """`baton handoff pr`: push Baton's branch of the landed work and open (or update) its
        pull request through the forge's CLI — after the person says so."""
        sure = await self.app.push_screen_wait(ConfirmModal(
            "open a pull request?", "Push the landed work, merged in plan order, to Baton's own "
            "branch on your remote, and open (or update) one pull request through your forge's "
            "CLI (gh or glab)? `baton handoff pr --stack` opens one per task instead."))
        if not sure:
            return
        self.note_line("publishing the landed work…", "bold")
        ok, done = await self.host.engine_call("pull request", api.publish)
        if ok:
            for pr in done.prs:
                self.note_line(f"  ✓ {pr['action']} #{pr['number']} {pr['url']}", "bold")

    def action_full_diff(self) -> None:
        entry = self.selected()
        if entry is not None and entry.kind == "file":
            self.app.push_screen(FileDiffScreen(entry.file.path, entry.file.diff))

    def action_help(self) -> None:
        """`?` here lists the handoff's own keys (the plan's are not what it takes)."""
        from baton_tui.tui.screens.help import HelpScreen, KeyRow

        rows = []
        for binding in self.BINDINGS:
            assert isinstance(binding, Binding)
            keys = ", ".join(self.app.get_key_display(Binding(k, binding.action))
                             for k in keys_of(binding, self.host.keymap))
            why = None if binding.action in ("close", "help") else self.why_not(binding.action)
            rows.append(KeyRow(keys, binding.description, binding.id or "", why))
        self.app.push_screen(HelpScreen(rows, title="handoff keys", scheme=HANDOFF_SCHEME,
                                        groups=HANDOFF_GROUPS, palette=False))

    def action_close(self) -> None:
        self.dismiss(None)
