"""Pydantic without its plugin discovery, for Baton's own models.

Pydantic looks for plugins when it builds a model's validator, and its loader imports
`importlib.metadata` to scan every installed package for them: 16 ms of every command that
reads a config or a plan, a sixth of `baton run`'s start, in the CLI and its conductor both.
Baton's models use no plugin, so each module that defines models calls `skip_discovery` before
them and the loader pydantic finds is one that finds none. Standard library only: the stand-in
is put in place before pydantic asks for its loader, not after.
"""

from __future__ import annotations

import sys
import types

LOADER = "pydantic.plugin._loader"


def skip_discovery() -> None:
    """Install a plugin loader that finds no plugins. A loader already imported (a process
    that wants pydantic's plugins) is left alone; a pydantic without this module never asks."""
    if LOADER not in sys.modules:
        loader = types.ModuleType(LOADER, "Baton's stand-in: no pydantic plugins.")
        loader.get_plugins = tuple  # type: ignore[attr-defined]  # called with no argument: ()
        sys.modules[LOADER] = loader
