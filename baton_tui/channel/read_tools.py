"""A read-only MCP server (`read_file`, `list_files`, `search`) confined to one folder.

Lent to agent CLIs whose tools cannot be made read-only for one run (Goose: its developer
extension's shell and editor are all or nothing). A research attempt then gets only these
tools and Baton's report tools, so it can study the worktree and report, and cannot write.
Paths are resolved inside the root; a path or link that leaves it is refused.

`python -m baton_tui.channel.read_tools ROOT` serves it on stdio with the standard library only
(run/mcp_stdio.py), so it answers in milliseconds (on FastMCP, about 0.4 s after spawn).

The worktree's content is untrusted, so every read is bounded: only regular files are opened
(stat first, so a FIFO, socket or device file is never opened; O_NONBLOCK and fstat in case one
is swapped in between), a call reads at most MAX_READ_BYTES of a file (a search at most
MAX_SEARCH_BYTES in all) in chunks, and a line keeps at most MAX_LINE_CHARS characters, so
neither a huge file nor one enormous line is ever held whole. A file that is not UTF-8 text is
binary to both tools: `search` skips it, `read_file` says so instead of showing it. A
`list_files` names at most MAX_FILES files; a `search` runs in a forked child stopped after
SEARCH_SECONDS (a regular expression cannot be interrupted otherwise).
"""

from __future__ import annotations

import codecs
import errno
import os
import re
import select
import signal
import stat
import sys
import time
from itertools import islice
from pathlib import Path

from baton_tui.channel.jsonrpc import Server
from baton_tui.channel.mcp_stdio import integer, result_schema, serve, string, tool_server

MAX_LINES = 2000
MAX_HITS = 200
MAX_FILES = 1000                    # named by one list_files
SEARCH_SECONDS = 20.0               # one search's time (a pattern that backtracks forever)
MAX_LINE_CHARS = 2000               # of one line, shown or searched: the rest is not kept
MAX_ANSWER_CHARS = 400_000          # of the lines one read_file shows (2,000 lines of 200)
MAX_READ_BYTES = 64 * 2 ** 20       # of one file, per call (read_file, or search per file)
MAX_SEARCH_BYTES = 256 * 2 ** 20    # of all the files one search reads
CHUNK = 2 ** 20                     # bytes read (and decoded) at a time
_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"  # where str.splitlines splits
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))
SKIP_DIRS = {".git", "node_modules", "__pycache__", ".venv"}


def _within(base: Path, target: Path) -> bool:
    return target == base or base in target.parents


def inside(root: Path, path: str) -> Path:
    """`path` (relative to root, or absolute) resolved; ValueError when it leaves the root."""
    base = root.resolve()
    target = (base / path).resolve()
    if not _within(base, target):
        raise ValueError(f"{path}: outside the folder this task may read")
    return target


def _not_regular(shown: str, mode: int) -> ValueError:
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    return ValueError(f"{shown}: {kind}, not a regular file: not read")


def _open_regular(target: Path, shown: str) -> tuple[int, int]:
    """A descriptor open for reading on `target`, and its size, when it is a regular file.

    Stat first, so a FIFO (whose open blocks until a writer comes), a socket or a device (which
    may never end, or act on being opened) is refused unopened; then open with O_NONBLOCK and
    check again, in case a FIFO was swapped in between."""
    name = str(target)
    mode = os.stat(name).st_mode
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), name)
    if not stat.S_ISREG(mode):
        raise _not_regular(shown, mode)
    fd = os.open(name, _OPEN_FLAGS)
    try:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode):
            raise _not_regular(shown, opened.st_mode)
    except BaseException:
        os.close(fd)
        raise
    return fd, opened.st_size


class _Reader:
    """The lines of an open file, read CHUNK bytes at a time and at most `budget` in all.

    `batches()` yields, per chunk, a list of `(head, length)` for the lines it completes, split
    exactly as `str.splitlines` splits the whole text: `head` is a line's first MAX_LINE_CHARS
    characters, `length` all of them (a line longer than a chunk is never held whole). It
    decodes strict UTF-8 (UnicodeDecodeError: a binary file). After it, `read` is the bytes read
    and `complete` whether that was the whole file; when the budget stopped it, the line it
    stopped in is not yielded."""

    def __init__(self, fd: int, budget: int):
        self.fd, self.budget, self.read, self.complete = fd, budget, 0, False

    def batches(self):
        decoder = codecs.getincrementaldecoder("utf-8")()
        head, length = "", 0    # the line under way: its first MAX_LINE_CHARS characters, length
        after_cr = False        # the last chunk ended in "\r": a "\n" starting the next is its pair
        while True:
            want = min(CHUNK, self.budget - self.read)
            if want > 0:
                data = os.read(self.fd, want)
                self.read += len(data)
            elif os.read(self.fd, 1):  # the budget spent, and the file goes on
                return
            else:
                data = b""
            text = decoder.decode(data, final=not data)
            if after_cr and text:
                text, after_cr = text[text.startswith("\n"):], False
            if text:
                parts = text.splitlines()
                ends, after_cr = text[-1] in _BREAKS, text[-1] == "\r"
                head, length = head + parts[0][:MAX_LINE_CHARS - len(head)], length + len(parts[0])
                if len(parts) > 1 or ends:
                    batch = [(head, length)]
                    batch += [(part[:MAX_LINE_CHARS], len(part))
                              for part in (parts[1:] if ends else parts[1:-1])]
                    head, length = ("", 0) if ends else (parts[-1][:MAX_LINE_CHARS],
                                                         len(parts[-1]))
                    yield batch
            if not data:
                self.complete = True
                if length:
                    yield [(head, length)]
                return


def _shown(head: str, length: int) -> str:
    if length == len(head):
        return head
    return (f"{head}… [line cut: {length - len(head)} more characters not shown; read_file "
            f"shows at most {MAX_LINE_CHARS} characters of a line]")


def read_file(root: Path, path: str, offset: int = 0, limit: int = 400) -> str:
    target = inside(root, path)
    start, stop = max(0, offset), max(0, offset) + max(1, min(limit, MAX_LINES))
    shown: list[str] = []
    chars = total = 0
    resume = None                   # the first line not shown when the answer filled up
    fd, size = _open_regular(target, path)
    try:
        reader = _Reader(fd, MAX_READ_BYTES)
        for batch in reader.batches():
            if resume is None and total < stop and start < total + len(batch):
                for n, (head, length) in enumerate(batch, total):
                    if start <= n < stop:
                        text = _shown(head, length)
                        if shown and chars + len(text) > MAX_ANSWER_CHARS:
                            resume = n
                            break
                        shown.append(f"{n + 1:>6}\t{text}")
                        chars += len(text)
            total += len(batch)             # lines past the ones shown are only counted
    except UnicodeDecodeError:
        return f"(binary file, {size} bytes: not UTF-8 text, so not shown; search skips it too)"
    finally:
        os.close(fd)
    full = resume is not None
    resume = stop if resume is None else resume
    if reader.complete:
        more = f"\n… {total - resume} more lines (offset={resume})" if resume < total else ""
        if more and full:
            more += f" — an answer holds at most {MAX_ANSWER_CHARS} characters"
    elif resume < total:
        more = (f"\n… more lines (offset={resume}); read_file reads only the first "
                f"{MAX_READ_BYTES} bytes of a file (here lines 1-{total}) and this one has "
                f"{size} bytes")
    else:
        more = (f"\n… stopped at line {total}: read_file reads only the first {MAX_READ_BYTES} "
                f"bytes of a file and this one has {size} bytes; the rest is beyond its reach")
    return "\n".join(shown) + more if shown else more.lstrip("\n")


def _files(top: Path):
    """The files under `top` in a stable order; `top` itself when it names a file."""
    if not top.is_dir():
        if top.exists():
            yield top
        return
    for folder, dirs, names in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        for name in sorted(names):
            yield Path(folder) / name


def list_files(root: Path, path: str = ".") -> str:
    """The files under `path`, the first MAX_FILES of them (the walk stops there: a huge
    tree is never listed whole to be cut afterwards)."""
    top, base = inside(root, path), root.resolve()
    found = [str(p.relative_to(base)) for p in islice(_files(top), MAX_FILES + 1)]
    if len(found) > MAX_FILES:
        return "\n".join(found[:MAX_FILES]) + (f"\n… (more than {MAX_FILES} files: list a "
                                               "folder with `path`)")
    return "\n".join(found) or "(no files)"


def search(root: Path, pattern: str, path: str = ".") -> str:
    """Lines matching a regular expression, as `file:line: text` (the first MAX_LINE_CHARS
    characters of each line of each regular UTF-8 file, MAX_READ_BYTES of a file at most)."""
    regex, base = re.compile(pattern), root.resolve()
    hits: list[str] = []
    budget, cut, stopped = MAX_SEARCH_BYTES, 0, False
    for file in _files(inside(root, path)):
        try:
            real = file.resolve()
            if not _within(base, real):
                continue        # a link out of the folder: read_file refuses it, so skip it here
        except (OSError, RuntimeError):                  # a link loop (RuntimeError before 3.13)
            continue
        if budget <= 0:
            stopped = True
            break
        try:
            fd, _ = _open_regular(real, str(file))
        except (OSError, ValueError):    # a FIFO, socket or device file, or unreadable: skipped
            continue
        reader, room = _Reader(fd, min(MAX_READ_BYTES, budget)), MAX_HITS - len(hits)
        found: list[str] = []
        try:
            # read on past the last hit there is room for: a file that turns out not to be
            # UTF-8 text is skipped whole, as it always was
            lines = 0
            for batch in reader.batches():
                for n, (head, _) in enumerate(batch if len(found) < room else (), lines + 1):
                    if regex.search(head):
                        found.append(f"{file.relative_to(base)}:{n}: {head.strip()[:200]}")
                        if len(found) >= room:
                            break
                lines += len(batch)
        except (OSError, UnicodeDecodeError):
            continue
        finally:
            os.close(fd)
            budget -= reader.read
        cut += not reader.complete
        hits += found
        if len(hits) >= MAX_HITS:
            return "\n".join(hits) + "\n… (more matches: narrow the search)" + _cuts(cut, False)
    return ("\n".join(hits) or "(no matches)") + _cuts(cut, stopped)


def _cuts(cut: int, stopped: bool) -> str:
    """What a search left unread, when it did."""
    notes = ""
    if cut:
        notes += (f"\n… ({cut} file{'s' if cut > 1 else ''} searched only in part: a search "
                  f"reads at most {MAX_READ_BYTES} bytes of a file and {MAX_SEARCH_BYTES} in all)")
    if stopped:
        notes += (f"\n… (stopped after reading {MAX_SEARCH_BYTES} bytes of files: narrow the "
                  f"search with `path`)")
    return notes


def timed(fn, seconds: float, *args) -> str:
    """`fn(*args)` in a forked child, given up after `seconds`: Python's regular expressions
    cannot be interrupted, and one that backtracks without end (`(a+)+$` on a long line)
    would hang the server and the agent's turn with it."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: answer through the pipe, then leave at once
        code = 0
        try:
            os.close(read_end)
            try:
                answer = fn(*args)
            except (OSError, ValueError, re.error) as exc:
                answer = f"error: {exc}"
            data = answer.encode("utf-8", "surrogateescape")
            while data:
                data = data[os.write(write_end, data):]
        except BaseException:  # noqa: BLE001 — the parent says it failed
            code = 1
        finally:
            os._exit(code)
    os.close(write_end)
    chunks, deadline = [], time.monotonic() + seconds
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([read_end], [], [], left)[0]:
                os.kill(pid, signal.SIGKILL)
                return (f"error: the search took longer than {seconds:g} s and was stopped: "
                        "use a simpler pattern or a narrower `path`")
            chunk = os.read(read_end, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read_end)
        os.waitpid(pid, 0)
    return b"".join(chunks).decode("utf-8", "surrogateescape") or "error: the search failed"


def _guarded(fn, root: Path, *args) -> str:
    """A refusal or failure the agent can read and act on is an answer, not a tool error."""
    try:
        return fn(root, *args)
    except (OSError, ValueError, re.error) as exc:
        return f"error: {exc}"


# The tools exactly as FastMCP listed them (input and output schemas included).
TOOLS = [
    {"name": "read_file",
     "description": "Read a text file of the task's folder (numbered lines; `offset` and "
                    "`limit` page through a long one; a line is cut at 2000 characters).",
     "inputSchema": {"properties": {"path": string("Path"),
                                    "offset": integer("Offset", default=0),
                                    "limit": integer("Limit", default=400)},
                     "required": ["path"], "title": "_readArguments", "type": "object"},
     "outputSchema": result_schema("_read")},
    {"name": "list_files",
     "description": "List the files under a folder of the task's folder (default: all of it).",
     "inputSchema": {"properties": {"path": string("Path", default=".")},
                     "title": "_listArguments", "type": "object"},
     "outputSchema": result_schema("_list")},
    {"name": "search",
     "description": "Search the task's folder for lines matching a regular expression (in "
                    "the first 2000 characters of each line of its text files).",
     "inputSchema": {"properties": {"pattern": string("Pattern"),
                                    "path": string("Path", default=".")},
                     "required": ["pattern"], "title": "_searchArguments", "type": "object"},
     "outputSchema": result_schema("_search")},
]


def build_server(root: Path) -> Server:
    def _read(path: str, offset: int = 0, limit: int = 400) -> str:
        return _guarded(read_file, root, path, offset, limit)

    def _list(path: str = ".") -> str:
        return _guarded(list_files, root, path)

    def _search(pattern: str, path: str = ".") -> str:
        return timed(_guarded, SEARCH_SECONDS, search, root, pattern, path)

    return tool_server("baton-read", TOOLS,
                       {"read_file": _read, "list_files": _list, "search": _search})


if __name__ == "__main__":
    serve(build_server(Path(sys.argv[1] if len(sys.argv) > 1 else ".")))
