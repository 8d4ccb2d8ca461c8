"""Reading the configuration files: TOML, bounded, checked for NUL, merged (standard library
only). `config` validates what is read here; the app reads its `[keys]` from here before its
first frame, and the whole configuration is validated right after it (see `keys_unchecked`).
"""

from __future__ import annotations

import hashlib
import os
import tomllib
from pathlib import Path
from typing import Any

from baton_tui.core.errors import BatonError
from baton_tui.core.words import Autonomy
from baton_tui.paths import personal_config_path

MAX_CONFIG_BYTES = 1 << 20  # a baton.toml larger than this is not a config file


def read_sources(repo_root: Path) -> tuple[Path, dict[str, Any], Path, dict[str, Any]]:
    """The repo's `baton.toml` and the personal config, each read as TOML: (path, table) of
    each. A file that is not there reads as an empty table; one that cannot be read, or is
    not TOML, is a one-line BatonError."""
    project_path = repo_root / "baton.toml"
    personal_path = personal_config_path()
    return project_path, read_toml(project_path), personal_path, read_toml(personal_path)


def read_toml_hashed(path: Path) -> tuple[dict[str, Any], str | None]:
    """`read_toml`, with the SHA-256 of the very bytes it parsed (None: no file). The trust
    check compares that hash: reading the file again for it would let a writer swap the
    file between the read that is hashed and the read that is run."""
    data = _read_bounded(path)
    if data is None:
        return {}, None
    return _parsed(path, data), hashlib.sha256(data).hexdigest()


def keys_unchecked(repo_root: Path) -> dict[str, str] | None:
    """`[keys]` as the merged configuration will hold it, read without validating the rest
    (that needs pydantic, a sixth of the app's start): None when it is anything but a
    table of strings, so the caller validates the whole configuration first after all."""
    _, project_raw, _, personal_raw = read_sources(repo_root)
    keys = merge(project_raw, personal_raw).get("keys", {})
    if not isinstance(keys, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in keys.items()):
        return None
    return keys


def file_hash(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def current_hash(path: Path) -> str | None:
    """The SHA-256 of the file as it is now, read bounded (None: not there, or unreadable)."""
    try:
        data = _read_bounded(path)
    except BatonError:
        return None
    return None if data is None else hashlib.sha256(data).hexdigest()


def read_toml(path: Path) -> dict[str, Any]:
    data = _read_bounded(path)
    return {} if data is None else _parsed(path, data)


def _read_bounded(path: Path) -> bytes | None:
    """The file's bytes (None: not there), read once."""
    try:
        with open(path, "rb") as fh:  # bounded: a baton.toml linked to /dev/zero must not hang
            data = fh.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise BatonError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise BatonError(f"{path}: larger than {MAX_CONFIG_BYTES >> 20} MiB: not a config file")
    return data


def _parsed(path: Path, data: bytes) -> dict[str, Any]:
    try:
        raw = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise BatonError(f"{path}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise BatonError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:
        raise BatonError(f"{path}: nested too deeply") from None
    where = _nul(raw)
    if where is not None:
        raise BatonError(f"{path}: {where or 'a key'}: contains a NUL character")
    return raw


def _nul(node: Any, where: str = "") -> str | None:
    """The dotted key of the first string holding NUL (no program or variable can carry one)."""
    if isinstance(node, str):
        return where if "\0" in node else None
    items = node.items() if isinstance(node, dict) else enumerate(node) \
        if isinstance(node, list) else ()
    for key, value in items:
        if isinstance(key, str) and "\0" in key:
            return where
        found = _nul(value, f"{where}.{key}" if where else str(key))
        if found is not None:
            return found
    return None


def merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def env_overrides() -> dict[str, Any]:
    """The documented environment names; other BATON_* variables are not configuration."""
    over: dict[str, Any] = {}
    planner = os.environ.get("BATON_PLANNER") or os.environ.get("AI_PROVIDER")
    if planner:
        over["planner"] = planner
    if os.environ.get("BATON_AUTONOMY"):
        value = os.environ["BATON_AUTONOMY"]
        if value not in tuple(Autonomy):
            raise BatonError(f"BATON_AUTONOMY: {value!r} is not one of {', '.join(Autonomy)}")
        over["autonomy"] = value
    if os.environ.get("BATON_MAX_PARALLEL"):
        value = os.environ["BATON_MAX_PARALLEL"]
        if not value.strip().isdigit() or int(value) < 1:
            raise BatonError(f"BATON_MAX_PARALLEL: {value!r} is not a whole number of at least 1")
        over["limits"] = {"max_parallel": int(value)}
    return over
