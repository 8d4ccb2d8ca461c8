"""Baton's home and the personal config file: the person's explicit choice first, then the
platform's folders (platformdirs) — on Linux exactly the XDG paths, their variables honoured."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from baton_tui.paths import baton_home, personal_config_path, user_folder

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the XDG paths are Linux's")


def test_explicit_paths_win(monkeypatch, tmp_path):
    monkeypatch.setenv("BATON_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("BATON_CONFIG", str(tmp_path / "mine.toml"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    assert baton_home() == (tmp_path / "home").resolve()
    assert personal_config_path() == tmp_path / "mine.toml"


@linux
def test_xdg_variables_are_honoured(monkeypatch, tmp_path):
    monkeypatch.delenv("BATON_HOME", raising=False)
    monkeypatch.delenv("BATON_CONFIG", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    assert baton_home() == tmp_path / "data" / "baton"
    assert personal_config_path() == tmp_path / "config" / "baton" / "config.toml"


@linux
@pytest.mark.parametrize("unset", [None, ""])
def test_without_xdg_variables_the_home_folders(monkeypatch, tmp_path, unset):
    monkeypatch.delenv("BATON_HOME", raising=False)
    monkeypatch.delenv("BATON_CONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        if unset is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, unset)
    assert baton_home() == Path(tmp_path) / ".local" / "share" / "baton"
    assert personal_config_path() == Path(tmp_path) / ".config" / "baton" / "config.toml"


@linux
@pytest.mark.parametrize("xdg", [None, "absolute"])
def test_the_xdg_folders_are_platformdirs_own(monkeypatch, tmp_path, xdg):
    """On Linux the folders are spelled out in paths.py (no import on `baton status`'s path):
    the very ones platformdirs names."""
    platformdirs = pytest.importorskip("platformdirs")
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        if xdg is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, str(tmp_path / name.lower()))
    assert user_folder("data") == Path(platformdirs.user_data_dir("baton", appauthor=False))
    assert user_folder("config") == Path(platformdirs.user_config_dir("baton", appauthor=False))


@linux
def test_a_relative_xdg_folder_is_honoured_as_it_always_was(monkeypatch):
    monkeypatch.delenv("BATON_HOME", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", "rel/data")
    assert baton_home() == Path("rel/data/baton")
