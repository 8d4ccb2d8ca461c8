"""The key → paint benchmark's outside view (benchmarks/pty_paint.py): an app in a real pty,
timed by what a terminal emulator reads back, not by anything inside the app."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
pyte = pytest.importorskip("pyte")

import pty_paint  # noqa: E402


def test_the_bare_app_in_a_pty_is_timed_until_the_terminal_shows_each_row_selected(tmp_path):
    term = pty_paint.Terminal([sys.executable, str(pty_paint.HERE), "bare"], tmp_path,
                              dict(os.environ))
    try:
        latencies, cpu = pty_paint.presses(term, pty_paint.bare_shows, 1.0)
        assert latencies and all(0 < ms < 5000 for ms in latencies)
        assert cpu >= 0
        # What the terminal shows now: the row the last key reached, and only that row.
        shown = [i for i in range(1, 9) if pty_paint.bare_shows(i)(term.screen)]
        assert len(shown) == 1
        assert not pty_paint.baton_shows(shown[0])(term.screen)  # no card gutter in it
    finally:
        term.close()
    assert term.child.returncode is not None


def test_a_cards_gutter_mark_is_what_the_baton_predicate_reads():
    screen = pyte.Screen(pty_paint.COLS, pty_paint.ROWS)
    stream = pyte.Stream(screen)
    stream.feed("\x1b[3;50H▌  ● #2 Task number 2  [research]"
                "\x1b[8;50H▌▶ ● #3 Task number 3  [research]")
    assert pty_paint.baton_shows(3)(screen)
    assert not pty_paint.baton_shows(2)(screen)
