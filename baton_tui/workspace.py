"""One repository as Baton sees it: paths, store, config, players — opened lazily."""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from baton_tui.config_files import keys_unchecked
from baton_tui.paths import RepoPaths, find_repo, personal_config_path
from baton_tui.skills import Skill, load_skills
from baton_tui.store.db import Store

if TYPE_CHECKING:
    from baton_tui.config import Config, LoadedConfig
    from baton_tui.players.registry import Catalog


class Workspace:
    """The engine's handle on a repository; every engine command takes one."""

    # the configuration files' (inode, size, mtime) when last read
    _config_stamp: tuple[tuple[int, int, int] | None, ...] = ()

    def __init__(self, start: Path | str | None = None, paths: RepoPaths | None = None):
        self.paths = paths or find_repo(start)

    @property
    def root(self) -> Path:
        return self.paths.root

    @property
    def store_path(self) -> Path:
        return self.paths.store_path

    @cached_property
    def store(self) -> Store:
        return Store(self.paths.store_path)

    @cached_property
    def loaded(self) -> "LoadedConfig":
        # lazy: pydantic, which `baton logs`, `budget` and `checkpoint` never need
        from baton_tui.config import load_config

        self._config_stamp = self._stamp()  # before reading: a change during the read is seen
        return load_config(self.paths.root)

    def refresh_config(self) -> None:
        """Read the configuration again on its next use when either file changed since it was
        read: a long-lived app (the TUI, `baton serve`) follows the person's edits to
        baton.toml instead of running — or trusting — the file as it was when it started."""
        if "loaded" in self.__dict__ and self._stamp() != self._config_stamp:
            for name in ("loaded", "catalog"):
                self.__dict__.pop(name, None)

    def _stamp(self) -> tuple[tuple[int, int, int] | None, ...]:
        stamps: list[tuple[int, int, int] | None] = []
        for path in (self.paths.project_config, personal_config_path()):
            try:
                st = path.stat()
                stamps.append((st.st_ino, st.st_size, st.st_mtime_ns))
            except OSError:
                stamps.append(None)
        return tuple(stamps)

    @property
    def config(self) -> "Config":
        """The merged, validated configuration (read again after `refresh_config` saw a
        change to either file)."""
        return self.loaded.config

    def keys(self) -> dict[str, str]:
        """`[keys]`, read without validating the rest of the configuration when that is not
        loaded yet (the app's first frame needs only these); the whole of it when `[keys]`
        itself is not a table of strings, so its error is the one given."""
        if "loaded" not in self.__dict__:
            keys = keys_unchecked(self.paths.root)
            if keys is not None:
                return keys
        return dict(self.config.keys)

    @cached_property
    def catalog(self) -> "Catalog":
        # lazy: pydantic, which `baton logs`, `budget` and `checkpoint` never need
        from baton_tui.players.registry import Catalog

        return Catalog.from_config(self.config)

    @cached_property
    def skills(self) -> dict[str, Skill]:
        return load_skills(self.paths.root)

    def sibling(self) -> "Workspace":
        """The same repository and settings with a store connection of its own — for a
        worker thread (SQLite connections belong to the thread that opened them)."""
        other = Workspace(paths=self.paths)
        for name in ("loaded", "catalog", "skills", "_config_stamp"):
            if name in self.__dict__:
                other.__dict__[name] = self.__dict__[name]
        return other

    def close(self) -> None:
        if "store" in self.__dict__:
            self.store.close()
