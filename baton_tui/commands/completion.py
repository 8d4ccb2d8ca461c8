"""`baton completion bash|zsh|fish`: the shell code that completes `baton`'s commands and
options (argcomplete), and the hook `cli.main` calls when a shell asks for completions.

    eval "$(baton completion bash)"       # ~/.bashrc
    eval "$(baton completion zsh)"        # ~/.zshrc
    baton completion fish | source        # ~/.config/fish/config.fish

Positionals complete what they take — `baton task-player 2 <TAB>` the players of this
repository (built-in and custom), `task-effort 2 <TAB>` the efforts, a task id the current
plan's ids — never file names (`cli._Complete` names which list each one gets).
"""

from __future__ import annotations

from argparse import ArgumentParser, Namespace

import argcomplete

from baton_tui import api
from baton_tui.core.words import BUILTIN_PLAYERS


def complete(parser: ArgumentParser) -> None:
    """Answer a completing shell and exit (argcomplete reads `_ARGCOMPLETE` and COMP_LINE).
    The internal commands (`attempt`, `conductor`) are not offered: Baton runs them itself."""
    commands, public = getattr(parser, "commands", {}), getattr(parser, "public_commands", ())
    for name in [name for name in commands if name not in public]:
        del commands[name]
    argcomplete.autocomplete(parser)


def cmd_completion(args: Namespace) -> int:
    print(argcomplete.shellcode(["baton"], shell=args.shell))
    return 0


def candidates(kind: str, words: tuple[str, ...], parsed: object) -> list[str]:
    """What one argument may be: `words` as given, or read from this repository. Whatever
    cannot be read (no repository, no plan, a broken config) completes to what is known
    without it — a shell's completion never prints an error."""
    if kind == "words":
        return list(words)
    try:
        ws = api.open_workspace()
        try:
            return _read(kind, ws, parsed)
        finally:
            ws.close()
    except Exception:  # completing must never fail loudly; the command itself will say why
        return list(BUILTIN_PLAYERS) if kind == "players" else []


def _read(kind: str, ws: api.Workspace, parsed: object) -> list[str]:
    if kind == "players":
        return list(ws.catalog.names())
    if kind == "runners":
        return api.runner_names(ws)
    if kind == "skills":
        return list(api.skills(ws))
    doc = api.current_doc(ws)
    if kind == "ids":
        return [str(t.id) for t in doc.tasks]
    if kind == "models":
        task_id = getattr(parsed, "id", None)
        task = next((t for t in doc.tasks if t.id == task_id), None)
        models, _default = api.player_catalog(ws, task.player) if task else (None, None)
        return ["default", *(models or ())]
    return []
