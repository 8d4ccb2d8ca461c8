"""The single-file binary's entry point (`scripts/build-binary` bundles Baton with PyInstaller).

In the binary there is no Python to start Baton's own processes with — the conductor, the
attempt shims, the spawner, `baton mcp`, the native agent, the read tools: `sys.executable`
is the binary itself. So `paths.own_module` gives `[binary, RUN_MODULE, module, *args]` there,
and `main` runs that module as `python -P -m module args` would. Only Baton's own modules run
that way (`baton_tui` or a module under it, found inside the binary: a frozen program has
neither the working directory nor `PYTHONPATH` on its import path, so a `baton_tui` in a
repository's checkout never answers for Baton). Everything else is the `baton` command.

The binary is PyInstaller's one-folder bundle, unpacked once per build into the person's cache
by the one file's `sh` header (scripts/self_unpacking.py), so `sys.executable` is the unpacked
`baton`, which stays for every process Baton starts (a conductor outliving this one, a shim
the spawner forks). Before anything runs, the environment Baton's children inherit is put back
as the person had it, should a bootloader have changed it: a `LD_LIBRARY_PATH` with the
bundle's libraries first would make `git` and the agents' CLIs load the bundle's OpenSSL or
zlib; and `PYINSTALLER_RESET_ENVIRONMENT` makes a binary Baton starts run as an instance of its
own, never inside this one's temporary folder (PyInstaller's one-file form).
"""

from __future__ import annotations

import os
import sys

__all__ = ["main", "own_module_name", "run_module"]

# How the internal form's first argument (`paths.RUN_MODULE`, `--baton-module`) begins: `main`
# imports `baton_tui.paths` (and with it `pathlib`, `urllib.parse`, `ipaddress`: some 5 ms) only
# for an argument that could be it, not at every start of the `baton` command.
_INTERNAL_PREFIX = "--baton-"


def own_module_name(name: str) -> bool:
    """Whether `name` is a module of Baton's own: `baton_tui` or dotted names under it."""
    parts = name.split(".")
    return parts[0] == "baton_tui" and all(part.isidentifier() for part in parts)


def _tidy_environment() -> None:
    """What Baton's children inherit: the person's library path, and a fresh bootloader."""
    env = os.environ
    original = env.pop("LD_LIBRARY_PATH_ORIG", None)
    if original is not None:
        env["LD_LIBRARY_PATH"] = original
    elif getattr(sys, "frozen", False):
        env.pop("LD_LIBRARY_PATH", None)
    env["PYINSTALLER_RESET_ENVIRONMENT"] = "1"


def _skip_missing_catalogs() -> None:
    """Make gettext's lookups in the bundle's own locale folder (`sys.base_prefix/share/locale`,
    which a bundle does not carry) answer at once: `argparse` translates every string it is
    given, and each `gettext.find` there tries a dozen `.mo` paths per language of the person's
    locale — some 600 failing `stat` calls and a fifth of `baton --version`'s time. Only the
    default folder, and only while it does not exist (the answer is then none, as before)."""
    import gettext

    default = getattr(gettext, "_default_localedir", None)
    if not isinstance(default, str) or os.path.isdir(default):
        return
    find = gettext.find

    def find_elsewhere(domain: str, localedir: str | None = None,
                       languages: object = None, all: bool = False) -> object:  # noqa: A002
        if localedir is None or localedir == default:
            return [] if all else None
        return find(domain, localedir, languages, all)  # type: ignore[call-overload]

    gettext.find = find_elsewhere  # type: ignore[assignment]  # the same calls, typed loosely


def run_module(name: str, args: list[str]) -> int:
    """Run Baton's module `name` as `python -m name *args` would; 2 for anything else."""
    import importlib.util
    import runpy

    from baton_tui.paths import RUN_MODULE

    spec = None
    if own_module_name(name):
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
    bundle = getattr(sys, "_MEIPASS", None)
    origin = getattr(spec, "origin", None) or ""
    inside = bundle is None or os.path.abspath(origin).startswith(os.path.abspath(bundle) + os.sep)
    if spec is None or not inside:
        print(f"baton: {RUN_MODULE} runs only Baton's own modules, not {name[:80]!r}",
              file=sys.stderr)
        return 2
    sys.argv = [name, *args]  # runpy puts the module's file first, as `python -m` does
    try:
        runpy.run_module(name, run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        code = exc.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        print(code, file=sys.stderr)
        return 1
    return 0


def _internal_form(argv: list[str]) -> bool:
    """Whether `argv` asks for a module of Baton's own (`--baton-module M …`)."""
    if not argv or not argv[0].startswith(_INTERNAL_PREFIX):
        return False
    from baton_tui.paths import RUN_MODULE

    return argv[0] == RUN_MODULE


def main() -> None:
    """The binary's `main`: Baton's own module when asked in the internal form, else `baton`."""
    _tidy_environment()
    argv = sys.argv[1:]
    if _internal_form(argv):
        if len(argv) < 2:
            print(f"baton: {argv[0]} needs a module", file=sys.stderr)
            sys.exit(2)
        code = run_module(argv[1], argv[2:])
        sys.stdout.flush()
        sys.exit(code)
    if getattr(sys, "frozen", False):
        _skip_missing_catalogs()
    from baton_tui.cli import entry

    entry()
