"""Text a person can see: the code points plan text may not hide, and one way to show them.

A plan is approved by reading it, and its text becomes an agent's prompt, so nothing in it
may be invisible: Unicode format characters (category Cf: zero-width spaces and joiners,
U+FEFF, U+061C, U+FFF9–FFFB, the soft hyphen, the tag characters U+E0000–E007F), other
code points that draw nothing (the combining grapheme joiner, Hangul fillers, variation
selectors beyond the emoji pair, Mongolian free variation selectors U+180B–180D and U+180F,
the Khmer inherent vowels U+17B4/17B5), control characters, and runs of combining marks stacked
past `MAX_MARKS`. `hidden` names the first; `shown` writes each as `<U+XXXX>`, so what a
front end prints and what the agent reads is the same text.

Kept, because they are visible and ordinary: every script's letters and marks (CJK, Arabic,
Devanagari…); U+200D (zero-width joiner) between two emoji, as in 👩‍💻 — it joins what
the person sees; U+200C (zero-width non-joiner) between two letters outside ASCII, as
Persian and Indic spelling uses it; U+FE0E/U+FE0F (text or emoji style) after a character.
Emoji tag sequences (the flags of England, Scotland, Wales) are refused with the tags: they
cannot be told apart from text smuggled in tags.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # `typing` stays unimported: `baton status` shows plan text through here
if TYPE_CHECKING:
    from collections.abc import Iterator

MAX_MARKS = 4  # combining marks on one character: Vietnamese uses 2, Tibetan stacks up to 4
_ZWNJ, _ZWJ = "\u200c", "\u200d"
_EMOJI_STYLE = "\ufe0e\ufe0f"
# CGJ, the Hangul fillers, the Mongolian free variation selectors, the Khmer inherent vowels
_DRAWS_NOTHING = frozenset("\u034f\u115f\u1160\u3164\uffa0\u180b\u180c\u180d\u180f"
                           "\u17b4\u17b5")
_KEPT_CONTROLS = frozenset("\t\n\r")
_ASCII_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _emoji(char: str) -> bool:
    """A pictograph (or a skin tone), as emoji ZWJ sequences join them."""
    code = ord(char)
    return (0x1F000 <= code <= 0x1FAFF or 0x2600 <= code <= 0x27BF or 0x2300 <= code <= 0x23FF
            or 0x2B00 <= code <= 0x2BFF or code in (0x00A9, 0x00AE, 0x203C, 0x2049, 0x2122))


def _letter(char: str) -> bool:
    import unicodedata  # lazy: text in ASCII never needs it

    return not char.isascii() and unicodedata.category(char)[0] in "LM"


def _hidden_at(text: str, i: int) -> bool:
    import unicodedata  # lazy: text in ASCII never needs it

    char = text[i]
    code = ord(char)
    before = text[i - 1] if i else ""
    after = text[i + 1] if i + 1 < len(text) else ""
    if char == _ZWJ:
        joined = before and (_emoji(before) or before in _EMOJI_STYLE)
        return not (joined and after and _emoji(after))
    if char == _ZWNJ:
        return not (before and after and _letter(before) and _letter(after))
    if char in _EMOJI_STYLE:
        return not before or before in _EMOJI_STYLE or before.isspace()
    if 0xFE00 <= code <= 0xFE0D or 0xE0100 <= code <= 0xE01EF or char in _DRAWS_NOTHING:
        return True
    category = unicodedata.category(char)
    if category == "Cc":
        return char not in _KEPT_CONTROLS
    return category == "Cf"


def _hidden(text: str) -> "Iterator[tuple[int, str]]":
    """(index, why) of each code point `text` should not hide."""
    import unicodedata  # lazy: text in ASCII never needs it

    marks = 0
    for i, char in enumerate(text):
        if char < "\x80":
            marks = 0
            if not char.isprintable() and char not in _KEPT_CONTROLS:
                yield i, "a control character"
            continue
        if unicodedata.category(char) in ("Mn", "Me"):
            marks += 1
            if marks > MAX_MARKS:
                yield i, f"more than {MAX_MARKS} combining marks stacked on one character"
                continue
        else:
            marks = 0
        if _hidden_at(text, i):
            yield i, "an invisible or control character"


def hidden(text: str) -> str | None:
    """One phrase naming the first code point `text` should not hide (`U+200B at character
    3 (an invisible or control character)`), or None when all of it is seen."""
    for index, why in _hidden(text):
        return f"U+{ord(text[index]):04X} at character {index + 1} ({why})"
    return None


def shown(text: str) -> str:
    """`text` with each code point `hidden` refuses written as `<U+XXXX>`: what a person sees
    of it, and what an agent is given. Text without any is returned as it is."""
    if text.isascii() and not _ASCII_CONTROL.search(text):
        return text
    if "\n" in text:  # line by line: the ASCII lines of a long text (a diff) cost nothing
        return "\n".join(map(shown, text.split("\n")))
    found = {index for index, _why in _hidden(text)}
    if not found:
        return text
    return "".join(f"<U+{ord(c):04X}>" if i in found else c for i, c in enumerate(text))
