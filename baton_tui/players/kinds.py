"""The two kinds of built-in player: agent CLIs on PATH and native API routes.

Adapters subclass these (`claude_code.py`, `codex.py`, `native.py`); `builtin.py` lists
them all. Kept apart so that every adapter module can be imported on its own.
"""

from __future__ import annotations

import os
from pathlib import Path

from baton_tui.players.base import Detection, Player
from baton_tui.players.versions import version as cli_version


class CliPlayer(Player):
    """A coding-agent CLI found on PATH and signed in by a credential file or a key variable."""

    key_vars: tuple[str, ...] = ()
    credential_files: tuple[str, ...] = ()
    install: str = ""

    def signed_in(self) -> str | None:
        """None when signed in, else what is missing."""
        if not self.key_vars and not self.credential_files:
            return None
        env = {**os.environ, **self.env}
        if any(env.get(var) for var in self.key_vars):
            return None
        home = Path(env.get("HOME", str(Path.home())))
        if any((home / rel).exists() for rel in self.credential_files):
            return None
        wanted = [*self.key_vars, *(f"~/{f}" for f in self.credential_files)]
        return "not signed in (none of " + ", ".join(wanted) + ")"

    def detect(self) -> Detection:
        path = self.executable()
        if path is None:
            return Detection(self.name, False, f"{self.bin or self.binary} not found on PATH",
                             fix=self.install or f"install {self.name}")
        version = cli_version(path)
        missing = self.signed_in()
        if missing:
            return Detection(self.name, False, missing, version, path,
                             fix=f"sign in to {self.name} or export {self.key_vars[0]}"
                             if self.key_vars else f"sign in to {self.name}")
        if type(self).launch is Player.launch:
            return Detection(self.name, False, "installed, but Baton's adapter for it is not built "
                             "yet", version, path, fix="use another player for now")
        return Detection(self.name, True, "", version, path)


class NativePlayer(Player):
    """A native API route (Baton's own agent loop over the vendor SDK)."""

    key_vars: tuple[str, ...] = ()

    def detect(self) -> Detection:
        env = {**os.environ, **self.env}
        if not any(env.get(v) for v in self.key_vars):
            return Detection(self.name, False, f"{self.key_vars[0]} is not set",
                             fix=f"export {self.key_vars[0]}=…")
        if type(self).launch is Player.launch:
            return Detection(self.name, False, "Baton's native loop for it is not built yet")
        return Detection(self.name, True, "", version="native")
