"""Make Baton's one file from PyInstaller's one-folder bundle: an `sh` header with the folder
appended as two gzipped tars.

PyInstaller's own one-file form unpacks its whole bundle (about 45 MB) into a new temporary
folder at every start and deletes it at the exit: some 0.3 to 1 s on each `baton` — and
Baton starts itself often (the conductor, a shim per attempt, each `baton report` an agent
makes). This file unpacks once per build instead: into `$BATON_CACHE_DIR`, else
`${XDG_CACHE_HOME:-~/.cache}/baton`, in a folder named by the payload's SHA-256, published
with one `ln -sn` (atomic: of several first starts at once, one wins and the others drop
their copy); every start after that is the header's few lines and an `exec` of the unpacked
`baton`, whose path Baton's own processes then run directly (`sys.executable`). On Linux the
header also sets what PyInstaller's loader would exec itself a second time to set (its
libraries on `LD_LIBRARY_PATH`), so that a start is one `exec`. The first start inflates the
payload once (`tar -xz`, which fails on a short file or a bad CRC as `gzip -t` would), in two
halves side by side: inflating is most of a first start (0.5 s of CPU for 64 MB), and a second
core halves its wait.

    python scripts/self_unpacking.py FOLDER OUT --label "baton 0.1.0 (commit …)"

FOLDER is PyInstaller's `dist/baton` (holding the executable `baton` and `_internal/`).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import sys
import tarfile
from pathlib import Path

HEADER = r"""#!/bin/sh
# @LABEL@ as one file: a PyInstaller bundle that unpacks itself once, on its first start, into
# ${BATON_CACHE_DIR:-${XDG_CACHE_HOME:-~/.cache}/baton}/@ID@ (a new build, a new folder), then
# runs from there. Delete that folder at will: the next start unpacks it again.
id=@ID@
cache="${BATON_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/baton}"
dir="$cache/$id"
if [ ! -x "$dir/baton" ]; then
  fail() {
    echo "baton: cannot unpack into $cache${1:+: $1}" >&2
    [ -n "${tmp:-}" ] && rm -rf "$tmp"
    exit 1
  }
  (umask 077 && mkdir -p "$cache") 2>/dev/null || fail
  tmp="$(mktemp -d "$cache/$id.XXXXXX" 2>/dev/null)" || fail
  # two halves at once; tar's -z fails on a short file or a bad CRC as gzip does
  tail -c +@OFFSET@ "$0" | head -c @SIZE@ | (cd "$tmp" && tar -xzf -) 2>/dev/null & one=$!
  tail -c +@OFFSET2@ "$0" | (cd "$tmp" && tar -xzf -) 2>/dev/null; two=$?
  wait "$one" && [ "$two" -eq 0 ] && (cd "$tmp" && pwd -P >.path) 2>/dev/null \
    || fail "a short or damaged file?"
  [ -x "$tmp/baton" ] || fail "a short or damaged file?"
  if ! ln -sn "${tmp##*/}" "$dir" 2>/dev/null; then
    if [ -x "$dir/baton" ]; then  # another first start won: run its copy
      rm -rf "$tmp"
    else  # a link left pointing at a deleted folder: take its place
      { rm -f "$dir" && ln -sn "${tmp##*/}" "$dir"; } 2>/dev/null || fail
    fi
  fi
fi
@FAST@exec "$dir/baton" "$@"
"""

# Linux only: what PyInstaller's loader would do before starting itself a second time — the
# bundle's libraries first on the library path (the person's own kept for Baton to put back,
# baton_tui/frozen.py), its real path named as the archive in use, this process marked as
# already restarted — done here, so the `exec` after it is the only start. Only when the folder's
# recorded real path is the one linked (else the loader's own way, which is always right).
FAST = r"""read -r real 2>/dev/null <"$dir/.path" || real=
if [ -n "$real" ] && [ "$real/baton" -ef "$dir/baton" ]; then
  unset PYINSTALLER_RESET_ENVIRONMENT _PYI_APPLICATION_HOME_DIR _PYI_SPLASH_IPC \
    _PYI_LINUX_PROCESS_NAME LD_LIBRARY_PATH_ORIG
  if [ -n "${LD_LIBRARY_PATH:-}" ]; then
    export LD_LIBRARY_PATH_ORIG="$LD_LIBRARY_PATH" LD_LIBRARY_PATH="$real/_internal:$LD_LIBRARY_PATH"
  else
    export LD_LIBRARY_PATH="$real/_internal"
  fi
  export _PYI_ARCHIVE_FILE="$real/baton" _PYI_PARENT_PROCESS_LEVEL=0
fi
"""


def payload(folder: Path) -> tuple[bytes, bytes]:
    """The folder's files as two gzipped tars of about the same unpacked size (unpacked side
    by side), members relative to the folder; every folder is in both, each file in one."""
    paths = sorted(folder.rglob("*"))
    folders = [p for p in paths if p.is_dir() and not p.is_symlink()]
    size = {p: p.lstat().st_size for p in paths if not (p.is_dir() and not p.is_symlink())}
    halves: tuple[list[Path], list[Path]] = ([], [])
    sizes = [0, 0]
    for path in sorted(size, key=lambda p: (-size[p], p)):  # the largest first, to the lighter
        lighter = sizes.index(min(sizes))
        halves[lighter].append(path)
        sizes[lighter] += size[path]
    return _tar(folder, folders + sorted(halves[0])), _tar(folder, folders + sorted(halves[1]))


def _tar(folder: Path, members: list[Path]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=6) as tar:
        for path in members:
            tar.add(path, arcname=str(path.relative_to(folder)), recursive=False)
    return buffer.getvalue()


def assemble(folder: Path, out: Path, label: str, linux: bool | None = None) -> str:
    """Write the one file to `out` (mode 755); return its cache folder's name. `linux` (default:
    this system's) starts the bundle with its loader's environment set, in one exec."""
    if not (folder / "baton").is_file():
        raise SystemExit(f"{folder}/baton: no such executable")
    one, two = payload(folder)
    data = one + two
    ident = hashlib.sha256(data).hexdigest()[:16]
    fast = FAST if (sys.platform.startswith("linux") if linux is None else linux) else ""
    text = (HEADER.replace("@LABEL@", label.replace("\n", " ")).replace("@ID@", ident)
            .replace("@FAST@", fast))
    offset = 1
    while True:  # tail -c +N starts at byte N (1-based): the header's length plus one
        header = (text.replace("@OFFSET@", str(offset)).replace("@SIZE@", str(len(one)))
                  .replace("@OFFSET2@", str(offset + len(one))).encode())
        if len(header) + 1 == offset:
            break
        offset = len(header) + 1
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_bytes(header + data)
    tmp.chmod(0o755)
    os.replace(tmp, out)
    return ident


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--label", default="baton")
    args = parser.parse_args()
    print(assemble(args.folder, args.out, args.label))


if __name__ == "__main__":
    main()
