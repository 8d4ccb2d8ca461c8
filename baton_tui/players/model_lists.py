"""Model lists that a CLI reports about itself (`opencode models`), cached between commands.

Asking the CLI is the only authoritative catalog for agents whose models depend on the
person's providers and sign-ins, but it costs seconds (OpenCode starts its whole runtime).
Plan validation runs in every `baton plan --from` and `task-model`, so the answer is kept
in `$BATON_HOME/cache/` under a key made of the binary, the files that decide the answer
(config, auth) and the environment variables that name providers: any change asks again,
and an answer is trusted for a day at most. A CLI that cannot answer gives None (no judgement).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from baton_tui.paths import baton_home

MAX_AGE = 86400.0
TIMEOUT = 60.0


def file_stamp(path: Path) -> list:
    """What says a file changed: its path, size and change time (no size for a missing one)."""
    try:
        st = path.stat()
    except OSError:
        return [str(path), None]
    return [str(path), st.st_size, st.st_mtime_ns]


def cache_dir() -> Path:
    """Where answers that CLIs give about themselves are kept (models, versions)."""
    return baton_home() / "cache"


def one_a_line(text: str) -> tuple[str, ...]:
    """The default reading: one model name a line (lines with spaces are headings)."""
    return tuple(line.strip() for line in text.splitlines()
                 if line.strip() and " " not in line.strip())


def listed_models(name: str, argv: list[str], cwd: Path, env: dict[str, str],
                  files: list[Path], env_names: list[str],
                  parse: Callable[[str], tuple[str, ...]] = one_a_line) -> tuple[str, ...] | None:
    """The models `argv` prints (read by `parse`), from the cache when still good."""
    exe = Path(argv[0])
    key_parts = [argv, str(cwd), file_stamp(exe.resolve() if exe.exists() else exe),
                 [file_stamp(p) for p in files],
                 sorted((n, hashlib.sha256(env[n].encode()).hexdigest()[:12])
                        for n in env_names if env.get(n))]
    key = hashlib.sha256(json.dumps(key_parts, default=str).encode()).hexdigest()
    cache = cache_dir() / f"models-{name}.json"
    try:
        saved = json.loads(cache.read_text(encoding="utf-8"))
        if saved.get("key") == key and time.time() - float(saved.get("at", 0)) < MAX_AGE:
            return tuple(saved["models"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    try:
        done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=TIMEOUT, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    models = parse(done.stdout)
    if done.returncode != 0 or not models:
        return None
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"key": key, "at": time.time(), "models": models}),
                       encoding="utf-8")
        os.replace(tmp, cache)
    except OSError:
        pass
    return models
