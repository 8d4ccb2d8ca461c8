"""The sample repository and plan behind `baton demo`: a tiny text-statistics package.

The plan has six tasks — one research task, parallel build branches, a task that
waits for two others, and a check — and each task's scripted agent writes real
code that the final check (`python3 -m unittest`) exercises.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

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
        {"id": 1, "title": "Survey the package", "mode": "research", "player": "demo",
         "prompt": "Read the package and report its layout and conventions."},
        {"id": 2, "title": "Count words", "player": "demo", "scope": ["textstats/words.py"],
         "prompt": "Add textstats/words.py with count_words(text).", "skills": ["tdd"]},
        {"id": 3, "title": "Count lines", "player": "demo", "scope": ["textstats/lines.py"],
         "prompt": "Add textstats/lines.py with count_lines(text)."},
        {"id": 4, "title": "Command line", "player": "demo", "depends_on": [2, 3],
         "scope": ["textstats/cli.py"], "prompt": "Add a CLI printing words and lines."},
        {"id": 5, "title": "Tests", "player": "demo", "depends_on": [4], "scope": ["tests/"],
         "prompt": "Add unittest tests for words, lines and the summary.",
         "check": "python3 -m unittest -q"},
        {"id": 6, "title": "Document usage", "player": "demo", "depends_on": [1],
         "scope": ["README.md"], "prompt": "Document the CLI in the README."},
    ]


def script() -> dict:
    """What the scripted agent does for each task."""
    return {
        "1": [{"print": "reading textstats/core.py"}, {"sleep": 0.6},
              {"report": "done", "summary": "One package `textstats` (core.read); tests use "
               "unittest; modules are small, one function each, with docstrings."}],
        "2": [{"progress": "writing count_words"}, {"sleep": 0.8},
              {"write": "textstats/words.py", "content": WORDS},
              {"report": "done", "summary": "count_words splits on whitespace"}],
        "3": [{"progress": "writing count_lines"}, {"sleep": 1.0},
              {"write": "textstats/lines.py", "content": LINES},
              {"report": "done", "summary": "count_lines counts a last unterminated line"}],
        "4": [{"progress": "wiring the CLI"}, {"sleep": 0.6},
              {"write": "textstats/cli.py", "content": CLI},
              {"report": "done", "summary": "python -m textstats.cli FILE prints the summary"}],
        "5": [{"progress": "writing tests"}, {"sleep": 0.5},
              {"write": "tests/test_textstats.py", "content": TESTS},
              {"report": "done", "summary": "3 unittest tests cover words, lines and summary"}],
        "6": [{"sleep": 0.4}, {"append": "README.md", "content": USAGE},
              {"report": "done", "summary": "README documents the CLI"}],
    }


def write_sample(root: Path) -> Path:
    """Create the sample files, the agent script and a baton.toml naming the demo agent."""
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    script_path = root.parent / "demo-agent-script.json"
    script_path.write_text(json.dumps(script(), indent=1), encoding="utf-8")
    argv = [sys.executable, "-m", "baton_tui.demo.agent", str(script_path)]
    (root / "baton.toml").write_text(
        "# The demo's scripted agent: edits files per its script and reports via `baton report`.\n"
        "[players.custom.demo]\n"
        f"command = {json.dumps(argv)}\n"
        f"research_command = {json.dumps(argv)}\n\n[limits]\nmax_parallel = 3\n",
        encoding="utf-8")
    plan_path = root.parent / "demo-plan.json"
    plan_path.write_text(json.dumps({"version": 1, "goal": "Add word and line counts with a CLI",
                                     "autonomy": "guarded", "tasks": tasks()}, indent=1))
    return plan_path
