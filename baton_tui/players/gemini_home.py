"""A per-attempt view of the person's `~/.gemini`, so Baton's settings reach one Gemini run.

Gemini CLI reads MCP servers (and model overrides) from settings files only. The person's
`~/.gemini/settings.json` must not be edited; a system settings file (GEMINI_CLI_SYSTEM_SETTINGS_
PATH) is read only when it and every folder above it belong to root; a workspace file would sit
in the task's worktree. What is left is `GEMINI_CLI_HOME`, the folder Gemini CLI takes as home
for `.gemini`: Baton points it at `<attempt dir>/gemini-home`, whose `.gemini` holds a
`settings.json` (the person's settings with Baton's merged in, 0600) and a link to every other
entry of the person's own `.gemini` — sign-in, trusted folders, extensions, and `tmp`, where
sessions live, so a saved session is the person's and resumes from any attempt (or by hand).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

GEMINI_DIR = ".gemini"
SETTINGS = "settings.json"


def person_gemini_dir(env: dict[str, str]) -> Path:
    """The `.gemini` folder the person's Gemini CLI uses."""
    home = env.get("GEMINI_CLI_HOME") or env.get("HOME") or str(Path.home())
    return Path(home) / GEMINI_DIR


def loads_jsonc(text: str) -> Any:
    """JSON with // and /* */ comments (Gemini's settings allow them), strings left intact."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            i = text.find("\n", i) if "\n" in text[i:] else n
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        else:
            out.append(c)
            i += 1
    return json.loads("".join(out))


def merged_settings(theirs: dict, ours: dict) -> dict:
    """`ours` over `theirs`: objects merge key by key, lists append (theirs first), else ours."""
    out = dict(theirs)
    for key, value in ours.items():
        mine = out.get(key)
        if isinstance(value, dict) and isinstance(mine, dict):
            out[key] = merged_settings(mine, value)
        elif isinstance(value, list) and isinstance(mine, list):
            out[key] = [*mine, *value]
        else:
            out[key] = value
    return out


def build_home(attempt_dir: Path, env: dict[str, str], ours: dict) -> Path:
    """Make `<attempt_dir>/gemini-home` and return it (the value for GEMINI_CLI_HOME)."""
    person = person_gemini_dir(env)
    try:
        (person / "tmp").mkdir(parents=True, exist_ok=True)   # sessions: the person's store
        entries = list(person.iterdir())
    except OSError:   # an unwritable home: Gemini CLI keeps this run's files in the view
        entries = []
    home = attempt_dir / "gemini-home"
    view = home / GEMINI_DIR
    view.mkdir(parents=True, exist_ok=True)
    for entry in entries:
        link = view / entry.name
        if entry.name != SETTINGS and not link.is_symlink() and not link.exists():
            link.symlink_to(entry, target_is_directory=entry.is_dir())
    real_home = Path(env.get("HOME") or Path.home())
    if (real_home / ".agents").is_dir() and not (home / ".agents").exists():
        (home / ".agents").symlink_to(real_home / ".agents", target_is_directory=True)
    try:
        theirs = loads_jsonc((person / SETTINGS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        theirs = {}
    settings = merged_settings(theirs if isinstance(theirs, dict) else {}, ours)
    path = view / SETTINGS
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(settings, fh, indent=1)
    return home
