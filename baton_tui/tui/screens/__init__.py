"""The app's screens, each imported when it first opens: the first frame needs none of them,
and their widgets (the text editor, tabs, diff views) are a good part of start-up
(benchmarks/bench_tui.py, time to first frame)."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from baton_tui.tui.screens.add_task import AddTaskModal
    from baton_tui.tui.screens.approve import ApproveModal
    from baton_tui.tui.screens.checkpoint import CheckpointModal
    from baton_tui.tui.screens.dag import DagScreen
    from baton_tui.tui.screens.handoff import HandoffScreen
    from baton_tui.tui.screens.prompt_editor import PromptEditor
    from baton_tui.tui.screens.task_detail import TaskDetail

_HOME = {"AddTaskModal": "add_task", "ApproveModal": "approve",
         "CheckpointModal": "checkpoint", "DagScreen": "dag", "HandoffScreen": "handoff",
         "PromptEditor": "prompt_editor", "TaskDetail": "task_detail"}
__all__ = ["AddTaskModal", "ApproveModal", "CheckpointModal", "DagScreen", "HandoffScreen",
           "PromptEditor", "TaskDetail"]


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_HOME[name]}"), name)
