"""An attempt's output log, bounded: its head and its tail are kept, the middle is cut.

An agent may print a gigabyte. The shim writes what the agent prints through `CappedLog`:
the first `HEAD` bytes stay, and once the rest passes `3 * TAIL` bytes the file is rewritten
as head + a marker saying how many bytes were cut + the last `TAIL` bytes (a new file renamed
over the old one, so a reader sees one or the other, never half of each). A log never grows
past about 13 MiB, whatever the agent prints.

Readers follow a log by its *logical* offset (bytes the agent printed so far): `read_from`
maps it onto the file, skipping what was cut, so a follower never reads anything twice and
learns how much it missed. Nothing here reads a whole log into memory (stdlib only: the
shim and `baton logs` use it).
"""

from __future__ import annotations

import os
import re

TYPE_CHECKING = False  # `typing` stays unimported on the shim's path
if TYPE_CHECKING:
    from typing import BinaryIO

HEAD = 1 << 20          # bytes kept from the start of the output
TAIL = 4 << 20          # bytes kept from its end (at least; up to 3x while it grows)
LOOK = 1 << 20          # bytes `read_from` hands a follower at most, by default
_MARK = b"\n[baton: %015d bytes of output cut here]\n"
MARK_LEN = len(_MARK % 0)
_MARK_RX = re.compile(rb"\n\[baton: (\d{15}) bytes of output cut here\]\n")


def marker(cut: int) -> bytes:
    return _MARK % cut


class CappedLog:
    """The shim's writer: append what the agent printed, cutting the middle when it grows."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = os.fspath(path)
        self.fh = open(self.path, "ab", buffering=0)
        self.size = os.fstat(self.fh.fileno()).st_size
        with open(self.path, "rb") as fh:
            self.cut = _cut_of(fh, self.size) or 0
        self.cuts = 0

    def write(self, data: bytes) -> None:
        self.fh.write(data)
        self.size += len(data)
        overhead = MARK_LEN if self.cut else 0
        if self.size > HEAD + overhead + 3 * TAIL:
            self._cut()

    def _cut(self) -> None:
        """Head + marker + the last TAIL bytes (from a line's start when one is near)."""
        overhead = MARK_LEN if self.cut else 0
        with open(self.path, "rb") as fh:
            head = fh.read(HEAD)
            fh.seek(self.size - TAIL)
            kept = fh.read(TAIL)
        newline = kept.find(b"\n", 0, 1 << 16)
        if newline >= 0:
            kept = kept[newline + 1:]
        self.cut += (self.size - HEAD - overhead) - len(kept)
        tmp = f"{self.path}.cut"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with open(fd, "wb") as out:
            out.write(head)
            out.write(marker(self.cut))
            out.write(kept)
        os.replace(tmp, self.path)
        self.fh.close()
        self.fh = open(self.path, "ab", buffering=0)
        self.size = HEAD + MARK_LEN + len(kept)
        self.cuts += 1

    def close(self) -> None:
        self.fh.close()


def _cut_of(fh: BinaryIO, size: int) -> int | None:
    """The bytes cut so far, from the marker at HEAD; None when the log was never cut."""
    if size < HEAD + MARK_LEN:
        return None
    fh.seek(HEAD)
    m = _MARK_RX.fullmatch(fh.read(MARK_LEN))
    return int(m.group(1)) if m else None


def logical_size(path: str | os.PathLike[str] | None) -> int:
    """How many bytes the agent printed so far (cut ones included); 0 when there is no log."""
    try:
        with open(path or "", "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            cut = _cut_of(fh, size)
    except OSError:
        return 0
    return size if cut is None else size - MARK_LEN + cut


def read_from(path: str | os.PathLike[str] | None, offset: int,
              limit: int = LOOK) -> tuple[bytes, int, int]:
    """Up to `limit` bytes of the output from logical `offset`: (data, the offset after it,
    bytes cut before it that this reader never saw). No log reads as nothing."""
    try:
        fh = open(path or "", "rb")
    except OSError:
        return b"", offset, 0
    with fh:
        size = os.fstat(fh.fileno()).st_size
        cut = _cut_of(fh, size)
        if cut is None or offset < HEAD:
            end = size if cut is None else HEAD
            fh.seek(offset)
            data = fh.read(max(0, min(limit, end - offset)))
            return data, offset + len(data), 0
        skipped = max(0, HEAD + cut - offset)
        offset += skipped
        fh.seek(HEAD + MARK_LEN + (offset - HEAD - cut))
        data = fh.read(limit)
        return data, offset + len(data), skipped


def stamp(path: str | os.PathLike[str] | None) -> tuple[int, int] | None:
    """The log's (size, last write in ns): while it reads the same, nothing was printed
    since (one stat, where reading opens the file); None when there is no log."""
    try:
        info = os.stat(path or "")
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns


def last_write(path: str | os.PathLike[str] | None) -> float | None:
    """When the agent last printed (its log's last write); None when there is no log."""
    try:
        return os.stat(path or "").st_mtime
    except OSError:
        return None


def head_and_tail(path: str | os.PathLike[str] | None, head: int = 256 << 10,
                  tail: int = 2 << 20) -> str:
    """The start and the end of a log as text, the middle left out: what a player's outcome
    is read from (its session id comes first, its result last). Bounded memory."""
    try:
        with open(path or "", "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size <= head + tail:
                data = fh.read()
            else:
                first = fh.read(head)
                fh.seek(size - tail)
                data = first + b"\n" + fh.read(tail)
    except OSError:
        return ""
    return data.decode("utf-8", "replace")
