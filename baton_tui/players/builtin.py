"""The built-in agent CLIs and native API routes: detection facts and catalogs.

Adapters that can start an agent override `launch`; the others are detected and
listed (so `baton players` and `baton doctor` tell the truth about a machine) but
refuse to start with a clear reason.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from baton_tui.players.base import Detection, Player


def _version(path: str) -> str | None:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10,
                             stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    text = (out.stdout or out.stderr).strip().splitlines()
    return text[0][:80] if text else None


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
        version = _version(path)
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


def _cli(name: str, binary: str, keys: tuple[str, ...], creds: tuple[str, ...], install: str,
         **attrs: object) -> type[CliPlayer]:
    return type(f"{name.title().replace('-', '')}Player", (CliPlayer,), {
        "name": name, "binary": binary, "key_vars": keys, "credential_files": creds,
        "install": install, **attrs})


# The native API routes subclass NativePlayer above (baton_tui/players/native.py).
from baton_tui.players.native import AnthropicPlayer, OpenAIPlayer  # noqa: E402

# Claude Code and Codex have adapter modules of their own (they subclass CliPlayer above).
from baton_tui.players.claude_code import ClaudeCodePlayer  # noqa: E402
from baton_tui.players.codex import CodexPlayer  # noqa: E402

BUILTIN_CLASSES: dict[str, type[Player]] = {
    "claude-code": ClaudeCodePlayer,
    "codex": CodexPlayer,
    "opencode": _cli("opencode", "opencode", (), (), "npm i -g opencode-ai"),
    "gemini": _cli("gemini", "gemini", ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
                   (".gemini/oauth_creds.json",), "npm i -g @google/gemini-cli"),
    "aider": _cli("aider", "aider", ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"), (),
                  "pip install aider-chat", checkpoints=False, efforts=()),
    "cursor-agent": _cli("cursor-agent", "cursor-agent", ("CURSOR_API_KEY",), (".cursor/cli-config.json",),
                         "see cursor.com/cli"),
    "goose": _cli("goose", "goose", (), (), "see block.github.io/goose"),
    "amp": _cli("amp", "amp", ("AMP_API_KEY",), (".config/amp/secrets.json",), "npm i -g @ampcode/cli"),
    "anthropic": AnthropicPlayer,
    "openai": OpenAIPlayer,
}
