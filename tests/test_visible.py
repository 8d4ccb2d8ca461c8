"""Which code points plan text may not hide (core/visible.py), and how they are shown."""

from __future__ import annotations

import pytest

from baton_tui.core.visible import MAX_MARKS, hidden, shown

KEPT = [
    "plain ASCII, tabs\tand\nnewlines\r\n",
    "修复登录错误 · إصلاح الخطأ · Việt · क्षत्रिय",
    "می\u200cخواهم",                      # ZWNJ between Persian letters
    "👩\u200d💻 🏳\ufe0f\u200d🌈 👍🏽",        # emoji ZWJ sequences, a skin tone
    "❤\ufe0f ☺\ufe0e",                    # emoji / text style after a character
    "e" + "\u0301" * MAX_MARKS,
    "ᠮᠣᠩᠭᠣᠯ ខ្មែរ",                        # Mongolian and Khmer letters themselves
]
REFUSED = [
    ("a\u200bb", "U+200B at character 2"), ("a\u200db", "U+200D"), ("x\u200cy", "U+200C"),
    ("\ufeffx", "U+FEFF"), ("\u061c", "U+061C"), ("\ufff9", "U+FFF9"), ("soft\u00ad", "U+00AD"),
    ("\U000e0041", "U+E0041"), ("🏴\U000e0067\U000e007f", "U+E0067"), ("\ufe0f", "U+FE0F"),
    ("a\ufe01", "U+FE01"), ("\u3164", "U+3164"), ("a\u034fb", "U+034F"),
    ("a\x1bb", "U+001B"), ("\u202e", "U+202E"),
    ("ᠠ\u180bᠡ", "U+180B"), ("a\u180cb", "U+180C"), ("a\u180db", "U+180D"),
    ("ᠠ\u180f", "U+180F"), ("ក\u17b4", "U+17B4"), ("a\u17b5b", "U+17B5"),
    ("e" + "\u0301" * (MAX_MARKS + 1), "combining marks"),
]


@pytest.mark.parametrize("text", KEPT)
def test_visible_text_is_kept_as_it_is(text):
    assert hidden(text) is None
    assert shown(text) is text or shown(text) == text


@pytest.mark.parametrize("text,named", REFUSED)
def test_a_hidden_code_point_is_named_and_written_out(text, named):
    assert named in (hidden(text) or "")
    assert "<U+" in shown(text) and hidden(shown(text)) is None  # what is shown hides nothing


def test_only_the_hidden_code_points_are_written_out():
    assert shown("fix\u200bthe 👩\u200d💻 bug\U000e0049") == "fix<U+200B>the 👩\u200d💻 bug<U+E0049>"
