"""Reading git's index file without a process, and knowing which index holds just a commit.

A commit of Baton's (`worktrees.commit_all`) stages the agent's work with `git add -A` into a
private copy of the worktree's index. When that index held HEAD's tree and nothing more
before, the entries `add -A` changed are exactly the paths the commit changes — what a scope
check needs, without a `git diff` of the commit afterwards. That "held HEAD and nothing
more" is known, not guessed: Baton's own git steps that leave an index holding a commit (a
checkout, `reset --keep`, `switch -c`, its own commit) note the index file's stamp (inode,
size, times: git replaces an index, never edits it, and no process can set a file's change
time back), and an index still at that stamp is the one git wrote then.

Only the plain formats are read (version 2 or 3, SHA-1 ids, not split, not sparse, at most
`MAX_ENTRIES` entries); anything else reads as None, and the caller asks git instead.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from pathlib import Path

__all__ = ["IndexFile", "MAX_ENTRIES", "stamp", "read", "stat_entries", "changed_paths",
           "note_holds", "holds", "holding"]

#: Indexes with more entries than this are left to git: reading one here (about a
#: microsecond an entry, twice a commit) would cost more than the process it saves.
MAX_ENTRIES = 5_000
_STAT = struct.Struct(">10I")  # ctime s/ns, mtime s/ns, dev, ino, mode, uid, gid, size
_OID = 20                      # SHA-1; a SHA-256 index is not read here
_FLAGS = 40 + _OID             # after the stat fields and the object id


def stamp(index: Path) -> str | None:
    """Which version of the index file `index` is (None: there is none)."""
    try:
        st = os.stat(index)
    except OSError:
        return None
    return f"{st.st_ino}-{st.st_size}-{st.st_mtime_ns}-{st.st_ctime_ns}"


@dataclass(frozen=True, eq=False)
class IndexFile:
    """The entries of an index (``(path, stage)`` → its mode and object id, as written), its
    cache-tree extension as written (which `git write-tree` trusts as much as the entries),
    and the file's bytes."""

    entries: dict[tuple[bytes, int], bytes]
    cache_tree: bytes
    data: bytes

    def same(self, other: Path) -> bool:
        """Whether the index at `other` holds what this one does: the same bytes, or (a
        copy refreshed since) the same entries and cache tree."""
        try:
            if other.read_bytes() == self.data:
                return True
        except OSError:
            return False
        found = read(other)
        return found is not None and found.entries == self.entries \
            and found.cache_tree == self.cache_tree


def _header(data: bytes) -> int | None:
    """The entry count of a version 2 or 3 index, None for anything else."""
    if len(data) < 12 + _OID or data[:4] != b"DIRC" \
            or data[4:8] not in (b"\0\0\0\x02", b"\0\0\0\x03"):
        return None
    return struct.unpack_from(">I", data, 8)[0]


def stat_entries(data: bytes):
    """Each entry of a version 2 or 3 index as (stat fields, flags, path, its offset), and
    last where the extensions begin, as ``(None, None, None, offset)``. Raises ValueError or
    struct.error on a file that is not one."""
    count = _header(data)
    if count is None:
        raise ValueError("not a version 2 or 3 index")
    offset = 12
    for _ in range(count):
        fields = _STAT.unpack_from(data, offset)
        flags, = struct.unpack_from(">H", data, offset + _FLAGS)
        head = _FLAGS + 2 + (2 if flags & 0x4000 else 0)
        end = data.index(b"\0", offset + head)
        yield fields, flags, data[offset + head:end], offset
        offset += (end - offset + 8) & ~7  # the path, NUL-padded to a multiple of 8
    yield None, None, None, offset


def _cache_tree(data: bytes, offset: int) -> bytes | None:
    """The cache-tree extension's body, reading the extensions from `offset` (b"" without
    one); None when the index is split or sparse (its entries are not all in this file)."""
    found = b""
    end = len(data) - _OID
    while offset + 8 <= end:
        sig, size = data[offset:offset + 4], struct.unpack_from(">I", data, offset + 4)[0]
        if sig in (b"link", b"sdir"):
            return None
        if sig == b"TREE":
            found = data[offset + 8:offset + 8 + size]
        offset += 8 + size
    return found


def read(index: Path) -> IndexFile | None:
    """The entries and cache tree of the index at `index` (None: not read here — missing,
    unusual, too big, or not an index)."""
    try:
        data = index.read_bytes()
    except OSError:
        return None
    count = _header(data)
    if count is None or count > MAX_ENTRIES:
        return None
    entries: dict[tuple[bytes, int], bytes] = {}
    find, flags_at = data.index, _FLAGS
    offset = 12
    try:
        for _ in range(count):  # one tight loop: this runs on every commit of a task
            flags = data[offset + flags_at] << 8 | data[offset + flags_at + 1]
            head = offset + flags_at + (4 if flags & 0x4000 else 2)
            end = find(b"\0", head)
            # The mode and the object id, as they are written (nothing else is compared).
            entries[(data[head:end], (flags >> 12) & 3)] = \
                data[offset + 24:offset + 28] + data[offset + 40:offset + flags_at]
            offset += (end - offset + 8) & ~7  # the path, NUL-padded to a multiple of 8
        cache_tree = _cache_tree(data, offset)
    except (struct.error, ValueError, IndexError):
        return None
    return None if cache_tree is None else IndexFile(entries, cache_tree, data)


def changed_paths(before: IndexFile, after: IndexFile) -> list[str]:
    """The paths whose entry differs between two readings of an index (added, removed, or
    another mode or object), in git's order; a path that is not UTF-8 comes out as git's
    own output decodes (surrogate escapes)."""
    keys = before.entries.keys() | after.entries.keys()
    paths = {key[0] for key in keys if before.entries.get(key) != after.entries.get(key)}
    return [p.decode("utf-8", "surrogateescape") for p in sorted(paths)]


_HOLDS: dict[str, tuple[str, str]] = {}  # index file -> (its stamp, the commit it holds)


def note_holds(index: Path, commit: str | None) -> None:
    """Baton's own git step just left `index` holding `commit`'s tree and nothing more (a
    checkout, `reset --keep`, `switch -c`, a commit of Baton's installing its index)."""
    found = stamp(index)
    if commit is None or found is None:
        _HOLDS.pop(str(index), None)
        return
    if len(_HOLDS) > 10_000:
        _HOLDS.clear()
    _HOLDS[str(index)] = (found, commit)


def holds(index: Path, commit: str | None) -> bool:
    """Whether `index` is still the one a step of Baton's left holding `commit` alone."""
    return commit is not None and _HOLDS.get(str(index)) == (stamp(index), commit)


def holding(index: Path, commit: str) -> IndexFile | None:
    """The index at `index` read, when it is still the one a step of Baton's left holding
    `commit` alone (`note_holds`); None otherwise."""
    if not holds(index, commit):
        return None
    found = read(index)
    return found if holds(index, commit) else None  # not replaced while it was read
