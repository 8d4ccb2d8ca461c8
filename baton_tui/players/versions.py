"""A CLI's `--version` line, remembered per binary so a busy machine never loses it.

Under load a Node CLI's `--version` can take longer than any deadline worth waiting (more than
ten seconds seen with two CPU hogs beside it), and a version that is not found reads as a
broken install. The line is kept in `$BATON_HOME/cache/` under the binary's resolved path,
size and change time: while that file is unchanged the answer is the kept one (no process
started at all); an upgrade replaces the file and asks again. A CLI that cannot answer in
time gives None, which never makes it unready: an installed, signed-in CLI is ready whatever
its `--version` does.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

from baton_tui.players.model_lists import cache_dir, file_stamp

DEADLINE = 30.0  # seconds a `--version` may take before it is given up on


def _asked(path: str) -> tuple[str | None, bool]:
    """Its first line of output, and whether it is worth keeping (the CLI exited 0)."""
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True,
                             timeout=DEADLINE, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None, False
    text = (out.stdout or out.stderr).strip().splitlines()
    return (text[0][:80], out.returncode == 0) if text else (None, False)


def version(path: str) -> str | None:
    """The `--version` line of the CLI at `path`: the kept one while the binary is the same
    file, else asked (and kept when it answers)."""
    real = Path(path).resolve()
    stamp = file_stamp(real)
    cache = cache_dir() / f"version-{hashlib.sha256(str(real).encode()).hexdigest()[:16]}.json"
    try:
        saved = json.loads(cache.read_text(encoding="utf-8"))
        if saved.get("stamp") == stamp and isinstance(saved.get("version"), str):
            return str(saved["version"])
    except (OSError, ValueError, AttributeError):
        pass
    found, keep = _asked(path)
    if found is not None and keep and stamp[1] is not None:
        try:
            cache.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache.with_suffix(f".{os.getpid()}.{id(found)}.tmp")
            tmp.write_text(json.dumps({"stamp": stamp, "version": found}), encoding="utf-8")
            os.replace(tmp, cache)
        except OSError:
            pass
    return found
