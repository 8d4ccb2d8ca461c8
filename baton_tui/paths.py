"""Where things live: the repository, its store, Baton's home, the personal config.

Found with the standard library only (no `git` subprocess; platformdirs on macOS and Windows
alone), so `baton status` and `baton report` stay fast.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


class RepoPaths:
    """The repository (or plain folder) Baton works in, and where its state lives.

    A plain class, not a dataclass: `dataclasses` imports `inspect`, a measurable share of
    `baton status`'s start-up.
    """

    __slots__ = ("root", "git_common_dir")

    def __init__(self, root: Path, git_common_dir: Path | None):
        self.root = root
        self.git_common_dir = git_common_dir

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RepoPaths) and (self.root, self.git_common_dir) == (
            other.root, other.git_common_dir)

    def __hash__(self) -> int:
        return hash((self.root, self.git_common_dir))

    def __repr__(self) -> str:
        return f"RepoPaths(root={self.root!r}, git_common_dir={self.git_common_dir!r})"

    @property
    def is_git(self) -> bool:
        return self.git_common_dir is not None

    @property
    def state_dir(self) -> Path:
        """`<git common dir>/baton` in a repository, `.baton/state` in a plain folder."""
        if self.git_common_dir is not None:
            return self.git_common_dir / "baton"
        return self.root / ".baton" / "state"

    @property
    def store_path(self) -> Path:
        return self.state_dir / "baton.db"

    @property
    def project_config(self) -> Path:
        return self.root / "baton.toml"


def common_dir_of(dot_git: Path) -> Path | None:
    """Resolve `.git` (a directory, or a worktree's `gitdir:` file) to the common dir."""
    if dot_git.is_dir():
        return dot_git.resolve()
    try:
        text = dot_git.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    gitdir = Path(text[len("gitdir:"):].strip())
    if not gitdir.is_absolute():
        gitdir = (dot_git.parent / gitdir).resolve()
    commondir = gitdir / "commondir"
    if commondir.is_file():
        common = Path(commondir.read_text(encoding="utf-8").strip())
        return (common if common.is_absolute() else gitdir / common).resolve()
    return gitdir.resolve()


def text_path(path: Path, what: str) -> Path:
    """`path`, once it is UTF-8 text; else one clear refusal (BatonError, exit 2). Baton
    keeps paths as text — in its store, its events, git's records of its worktrees — and a
    path with other bytes would fail there, task by task, far from its cause."""
    try:
        os.fsencode(path).decode("utf-8")
    except UnicodeDecodeError:
        from baton_tui.core.errors import BatonError  # lazy: `baton status` rarely needs it

        said = os.fsencode(path).decode("utf-8", "backslashreplace")
        raise BatonError(f"{what} {said} is not UTF-8 text: Baton keeps paths as text — "
                         "rename it (or use another folder) to a UTF-8 name", code=2) from None
    return path


def find_repo(start: Path | str | None = None) -> RepoPaths:
    """The enclosing git work tree of `start`, or `start` itself as a plain folder.

    A folder that already holds `.baton/state` is used as a plain-folder root.
    """
    here = text_path(Path(start or os.getcwd()).resolve(), "the folder")
    for candidate in (here, *here.parents):
        dot_git = candidate / ".git"
        if dot_git.exists():
            common = common_dir_of(dot_git)
            if common is not None:
                return RepoPaths(candidate, common)
        if (candidate / ".baton" / "state").is_dir():
            return RepoPaths(candidate, None)
    return RepoPaths(here, None)


def baton_home() -> Path:
    """`$BATON_HOME`, else the person's data folder for Baton (`user_folder`): on Linux
    `$XDG_DATA_HOME/baton`, `~/.local/share/baton` without it."""
    explicit = os.environ.get("BATON_HOME")
    if explicit:
        return text_path(Path(explicit).expanduser().resolve(), "BATON_HOME")
    return text_path(user_folder("data"), "Baton's data folder")


def personal_config_path() -> Path:
    """`$BATON_CONFIG`, else `config.toml` in the person's config folder for Baton
    (`user_folder`): on Linux `$XDG_CONFIG_HOME/baton`, `~/.config/baton` without it."""
    explicit = os.environ.get("BATON_CONFIG")
    if explicit:
        return Path(explicit).expanduser()
    return user_folder("config") / "config.toml"


_XDG = {"data": ("XDG_DATA_HOME", (".local", "share")), "config": ("XDG_CONFIG_HOME", (".config",))}


def user_folder(kind: str) -> Path:
    """The person's `kind` folder ("data" or "config") for Baton, where the platform keeps
    them: platformdirs' answer on macOS (`~/Library/Application Support/baton`) and Windows.
    Elsewhere the XDG folders, spelled out here: platformdirs gives the same for an absolute
    `$XDG_…` or none (tests/test_paths.py), but would drop a relative one Baton has always
    honoured, and importing it costs `baton status` 10 ms (it reads the config's path)."""
    if sys.platform in ("darwin", "win32"):
        import platformdirs  # lazy: only these platforms need it, and it costs 10 ms (`baton status`)

        find = platformdirs.user_data_dir if kind == "data" else platformdirs.user_config_dir
        return Path(find("baton", appauthor=False))
    variable, below_home = _XDG[kind]
    base = os.environ.get(variable)
    return (Path(base) if base else Path.home().joinpath(*below_home)) / "baton"


def private_file(path: Path) -> Path:
    """Create `path` (and its folder) readable by the person only (0600) unless it exists;
    for logs of agents' raw output, which may quote anything the agent saw."""
    path.parent.mkdir(parents=True, exist_ok=True)
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600))
    try:
        os.chmod(path, 0o600)
    except OSError:
        pass
    return path


def write_private(path: Path, text: str) -> Path:
    """Write a 0600 file (the prompt lives outside the worktree, readable only by the person)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.chmod(path, 0o600)
    return path


RUN_MODULE = "--baton-module"  # the binary's internal form of `python -m` (baton_tui/frozen.py)


def own_module(module: str, *args: str) -> list[str]:
    """The argv that runs one of Baton's own modules on this interpreter — never a package of
    the same name in the working directory, which is a repository's checkout or a task's
    worktree, both untrusted (`-P`: the directory is not put first on sys.path; `python -m
    baton_tui` in a checkout holding `baton_tui/` ran that checkout's code, before any trust).
    In the single-file binary (`sys.frozen`) there is no interpreter to name: the binary runs
    the module itself, from inside its bundle."""
    if getattr(sys, "frozen", False):
        return [sys.executable, RUN_MODULE, module, *args]
    return [sys.executable, "-P", "-m", module, *args]
