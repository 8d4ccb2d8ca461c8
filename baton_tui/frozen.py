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

from baton_tui.paths import RUN_MODULE

__all__ = ["RUN_MODULE", "main", "own_module_name"]


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


def run_module(name: str, args: list[str]) -> int:
    """Run Baton's module `name` as `python -m name *args` would; 2 for anything else."""
    import importlib.util
    import runpy

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


def main() -> None:
    """The binary's `main`: Baton's own module when asked in the internal form, else `baton`."""
    _tidy_environment()
    argv = sys.argv[1:]
    if argv[:1] == [RUN_MODULE]:
        if len(argv) < 2:
            print(f"baton: {RUN_MODULE} needs a module", file=sys.stderr)
            sys.exit(2)
        code = run_module(argv[1], argv[2:])
        sys.stdout.flush()
        sys.exit(code)
    from baton_tui.cli import entry

    entry()
