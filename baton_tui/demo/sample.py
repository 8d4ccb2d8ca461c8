"""The sample repository and plan behind `baton demo`: a tiny text-statistics package.

The plan has six tasks — one research task, parallel build branches, a task that
waits for two others, and a check — all on Baton's native `anthropic` player: a
real agent loop over HTTP whose model is the scripted model server on 127.0.0.1.
Each task's scripted answers make the agent write real code with its own tools,
which the final check (`python3 -m unittest`) exercises.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import tomli_w

from baton_tui.core.words import Autonomy, Mode
from baton_tui.demo.script import EXHAUSTED_TEXT, Answer, Script, text_of
from baton_tui.demo.server import ScriptedServer

FILES = {
    "README.md": "# textstats\n\nSmall text statistics.\n",
    "textstats/__init__.py": '"""Small text statistics."""\n',
    "textstats/core.py": (
        '"""Reading text."""\n\n\ndef read(path):\n'
        '    with open(path, encoding="utf-8") as fh:\n        return fh.read()\n'),
    "tests/__init__.py": "",
    ".gitignore": "__pycache__/\n",
}

WORDS = '''"""Counting words."""


def count_words(text):
    """Words are runs of non-space characters."""
    return len(text.split())
'''

LINES = '''"""Counting lines."""


def count_lines(text):
    """A final line without a newline still counts."""
    if not text:
        return 0
    return text.count("\\n") + (0 if text.endswith("\\n") else 1)
'''

CLI = '''"""`python -m textstats.cli FILE`: words and lines of a file."""

import sys

from textstats.core import read
from textstats.lines import count_lines
from textstats.words import count_words


def summary(text):
    return f"{count_words(text)} words, {count_lines(text)} lines"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    print(summary(read(argv[0])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''

TESTS = '''import unittest

from textstats.cli import summary
from textstats.lines import count_lines
from textstats.words import count_words


class TextStatsTest(unittest.TestCase):
    def test_words(self):
        self.assertEqual(count_words("a b  c"), 3)

    def test_lines(self):
        self.assertEqual(count_lines("a\\nb"), 2)
        self.assertEqual(count_lines(""), 0)

    def test_summary(self):
        self.assertEqual(summary("one two\\nthree\\n"), "3 words, 2 lines")


if __name__ == "__main__":
    unittest.main()
'''

USAGE = "\n## Usage\n\n    python -m textstats.cli FILE   # prints words and lines\n"


def tasks() -> list[dict]:
    return [
        {"id": 1, "title": "Survey the package", "mode": Mode.RESEARCH, "player": "anthropic",
         "prompt": "Read the package and report its layout and conventions."},
        {"id": 2, "title": "Count words", "player": "anthropic", "scope": ["textstats/words.py"],
         "prompt": "Add textstats/words.py with count_words(text).", "skills": ["tdd"]},
        {"id": 3, "title": "Count lines", "player": "anthropic", "scope": ["textstats/lines.py"],
         "prompt": "Add textstats/lines.py with count_lines(text)."},
        {"id": 4, "title": "Command line", "player": "anthropic", "depends_on": [2, 3],
         "scope": ["textstats/cli.py"], "prompt": "Add a CLI printing words and lines."},
        {"id": 5, "title": "Tests", "player": "anthropic", "depends_on": [4], "scope": ["tests/"],
         "prompt": "Add unittest tests for words, lines and the summary.",
         "check": "python3 -m unittest -q"},
        {"id": 6, "title": "Document usage", "player": "anthropic", "depends_on": [1],
         "scope": ["README.md"], "prompt": "Document the CLI in the README."},
    ]


def _report(summary: str) -> dict:
    return {"tool": "baton_report", "input": {"status": "done", "summary": summary}}


def _progress(note: str) -> dict:
    return {"tool": "baton_report", "input": {"status": "progress", "summary": note}}


def _write(path: str, content: str) -> dict:
    return {"tool": "write_file", "input": {"path": path, "content": content}}


def model_turns() -> dict[int, list[dict]]:
    """What the scripted model answers the native agent of each task, turn by turn.

    The agent's own tools do the work (read_file, write_file, edit_file, baton_report); the
    model server only replays these answers, one per request, per task.
    """
    return {
        1: [{"text": "Reading the package.",
             "tools": [{"tool": "list_files", "input": {"path": "."}},
                       {"tool": "read_file", "input": {"path": "textstats/core.py"}}]},
            {"tools": [_report("One package `textstats` (core.read); tests use unittest; "
                               "modules are small, one function each, with docstrings.")]},
            {"text": "Reported the survey."}],
        2: [{"tools": [_progress("writing count_words"), _write("textstats/words.py", WORDS)]},
            {"tools": [_report("count_words splits on whitespace")]},
            {"text": "Done: textstats/words.py."}],
        3: [{"tools": [_progress("writing count_lines"), _write("textstats/lines.py", LINES)]},
            {"tools": [_report("count_lines counts a last unterminated line")]},
            {"text": "Done: textstats/lines.py."}],
        4: [{"tools": [_progress("wiring the CLI"), _write("textstats/cli.py", CLI)]},
            {"tools": [_report("python -m textstats.cli FILE prints the summary")]},
            {"text": "Done: textstats/cli.py."}],
        5: [{"tools": [_progress("writing tests"), _write("tests/test_textstats.py", TESTS)]},
            {"tools": [{"tool": "run_command", "input": {"command": ["python3", "-m",
                                                                     "unittest", "-q"]}},
                       _report("3 unittest tests cover words, lines and summary")]},
            {"text": "Done: tests pass."}],
        6: [{"text": "Documenting the CLI.",
             "tools": [{"tool": "edit_file", "input": {
                 "path": "README.md", "old_string": "Small text statistics.\n",
                 "new_string": "Small text statistics.\n" + USAGE}}]},
            {"tools": [_report("README documents the CLI")]},
            {"text": "Done: README.md."}],
    }


_TASK_HEADER = re.compile(r"^# Task (\d+):", re.M)


class DemoModelServer(ScriptedServer):
    """The scripted model server with one script per task, picked from the prompt's header.

    Tasks run side by side, so one shared queue of turns would hand one task's answer to
    another; each request is routed by the `# Task N:` line that opens every task prompt.
    """

    def __init__(self, turns_by_task: dict[int, list[dict]], **kwargs: object):
        super().__init__([], **kwargs)  # type: ignore[arg-type]
        self.scripts = {task: Script(turns, self.side_text)
                        for task, turns in turns_by_task.items()}

    def _take_turn(self, protocol: str, req: dict, record: dict) -> Answer:
        messages = req.get("messages") or []
        first = text_of(messages[0].get("content")) if messages else ""
        found = _TASK_HEADER.search(first)
        script = self.scripts.get(int(found.group(1))) if found else None
        if script is None:
            record["side"] = "unknown-task"
            return Answer(text=EXHAUSTED_TEXT)
        answer, record["turn"], record["side"] = script.take(protocol, req)
        return answer


def start_model_server() -> DemoModelServer:
    """The demo's model: scripted answers on 127.0.0.1 (an ephemeral port), not a model."""
    return DemoModelServer(model_turns()).start()


def write_sample(root: Path) -> Path:
    """Create the sample files, a baton.toml and the plan file (returned)."""
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (root / "baton.toml").write_text(
        "# The demo's tasks run on Baton's native `anthropic` player, whose model is the\n"
        "# scripted model server `baton demo` starts on 127.0.0.1.\n"
        + tomli_w.dumps({"limits": {"max_parallel": 3}}), encoding="utf-8")
    plan_path = root.parent / "demo-plan.json"
    plan_path.write_text(json.dumps({"version": 1, "goal": "Add word and line counts with a CLI",
                                     "autonomy": Autonomy.GUARDED, "tasks": tasks()}, indent=1))
    return plan_path
