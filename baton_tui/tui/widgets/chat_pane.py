"""The conversation: goal input, the planner's steps and questions, slash commands."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input

from baton_tui.tui import bindings
from baton_tui.tui.widgets.chat_log import ChatLog

class ChatPane(Vertical):
    """Shows the conversation; posts `Said` for every line the person enters."""

    BINDINGS = [*bindings.CHAT]  # a fresh list of Textual's declared type

    class Said(Message):
        """The person entered a line (a goal, an answer, or a /command)."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(self, blink: bool = True) -> None:
        super().__init__(id="chat")
        self.blink = blink
        self.border_title = "chat"

    def compose(self) -> ComposeResult:
        log = ChatLog(id="chat-log", wrap=True, markup=False, auto_scroll=True, min_width=20)
        log.can_focus = False
        yield log
        prompt = Input(placeholder="a goal, answer or /help", id="chat-input")
        prompt.cursor_blink = self.blink
        yield prompt

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        event.input.clear()
        self.post_message(self.Said(event.value.strip()))

    # writing -------------------------------------------------------------------------
    def say(self, who: str, text: str | Text, style: str = "") -> None:
        line = Text()
        line.append(f"{who}: ", style="bold")
        line.append(text if isinstance(text, Text) else Text(text, style=style))
        self.query_one(ChatLog).write(line)

    def step(self, text: str) -> None:
        self.query_one(ChatLog).write(Text(f"  · {text}", style="dim"))

    def question(self, question: str, recommendation: str) -> None:
        body = Text()
        body.append("planner asks: ", style="bold")
        body.append(question)
        if recommendation:
            body.append("\n  recommended: ", style="bold")
            body.append(recommendation, style="italic")
            body.append("\n  press enter on an empty line to take it, or type your answer",
                        style="dim")
        self.query_one(ChatLog).write(body)

    def spec(self, text: str) -> None:
        """The spec the planner wrote (`/to-spec`), shown whole: the plan is built on it."""
        body = Text()
        body.append("planner wrote a spec:\n", style="bold")
        body.append(text)
        self.query_one(ChatLog).write(body)

    def lines(self, text: str) -> None:
        self.query_one(ChatLog).write(Text(text))
