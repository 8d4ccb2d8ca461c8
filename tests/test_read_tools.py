"""The read-only tools lent to Goose (`python -m baton_tui.channel.read_tools ROOT`), driven as a
real child process over newline-delimited JSON-RPC on its stdin/stdout: the tools keep the
names, schemas and results they had on FastMCP, and nothing outside ROOT can be read."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from baton_tui.channel import read_tools

REFUSED = "outside the folder this task may read"


class _Pipe:
    """The read-tools server as a child process, spoken to one JSON line at a time."""

    def __init__(self, root: Path, deadline: float | None = None):
        self.proc = subprocess.Popen([sys.executable, "-m", "baton_tui.channel.read_tools",
                                      str(root)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.ids = 0
        # a server that hangs is killed after `deadline` seconds: the test then fails (no reply)
        # instead of waiting for ever
        self.watchdog = threading.Timer(deadline, self.proc.kill) if deadline else None
        if self.watchdog:
            self.watchdog.start()

    def send(self, message: dict) -> None:
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict | None = None) -> dict:
        self.ids += 1
        message = {"jsonrpc": "2.0", "id": self.ids, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        line = self.proc.stdout.readline()
        assert line.endswith(b"\n"), self.proc.stderr.read().decode()
        reply = json.loads(line)
        assert reply["jsonrpc"] == "2.0" and reply["id"] == self.ids, reply
        return reply

    def initialize(self) -> dict:
        """The handshake every MCP client starts with (FastMCP required all three fields)."""
        reply = self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                            "clientInfo": {"name": "test", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})  # no reply
        return reply["result"]

    def call(self, tool: str, **arguments) -> dict:
        return self.request("tools/call", {"name": tool, "arguments": arguments})["result"]

    def text(self, tool: str, **arguments) -> str:
        """A tool's answer (not a tool error), as FastMCP gave it: text plus structured."""
        result = self.call(tool, **arguments)
        assert result["isError"] is False, result
        [content] = result["content"]
        assert content["type"] == "text"
        assert result["structuredContent"] == {"result": content["text"]}
        return content["text"]

    def close(self) -> int:
        if self.watchdog:
            self.watchdog.cancel()
        self.proc.stdin.close()
        code = self.proc.wait(timeout=30)
        self.proc.stdout.close()
        self.proc.stderr.close()
        return code


@pytest.fixture
def tree(tmp_path) -> Path:
    """A worktree with text, a long file, binary, skipped folders and links in and out."""
    root = tmp_path / "wt"
    (root / "src").mkdir(parents=True)
    (root / "README.md").write_text("# sample\nline two\n")
    (root / "src" / "app.py").write_text("def main():\n    return 'hello'\n")
    (root / "src" / "long.txt").write_text("".join(f"row {n}\n" for n in range(1, 3001)))
    (root / "blob.bin").write_bytes(b"\x00\x01\xff\xfe hello\n")
    for skipped in (".git", "node_modules", "__pycache__", ".venv"):
        (root / skipped).mkdir()
        (root / skipped / "hidden.txt").write_text("hello from a skipped folder\n")
    (tmp_path / "secret.txt").write_text("the secret outside\n")
    (root / "escape").symlink_to(tmp_path / "secret.txt")
    (root / "escape-dir").symlink_to(tmp_path, target_is_directory=True)
    (root / "inner").symlink_to("src", target_is_directory=True)
    return root


READ_SCHEMA = {"properties": {"path": {"title": "Path", "type": "string"},
                              "offset": {"default": 0, "title": "Offset", "type": "integer"},
                              "limit": {"default": 400, "title": "Limit", "type": "integer"}},
               "required": ["path"], "title": "_readArguments", "type": "object"}
LIST_SCHEMA = {"properties": {"path": {"default": ".", "title": "Path", "type": "string"}},
               "title": "_listArguments", "type": "object"}
SEARCH_SCHEMA = {"properties": {"pattern": {"title": "Pattern", "type": "string"},
                                "path": {"default": ".", "title": "Path", "type": "string"}},
                 "required": ["pattern"], "title": "_searchArguments", "type": "object"}


def _output(title: str) -> dict:
    return {"properties": {"result": {"title": "Result", "type": "string"}},
            "required": ["result"], "title": f"{title}Output", "type": "object"}


def test_initialize_and_the_tools_as_fastmcp_listed_them(tree):
    pipe = _Pipe(tree)
    try:
        init = pipe.initialize()
        assert init["protocolVersion"] == "2025-06-18"
        assert init["capabilities"]["tools"] == {"listChanged": False}
        assert init["serverInfo"]["name"] == "baton-read"
        assert pipe.request("ping")["result"] == {}
        tools = pipe.request("tools/list")["result"]["tools"]
        assert [t["name"] for t in tools] == ["read_file", "list_files", "search"]
        by_name = {t["name"]: t for t in tools}
        assert by_name["read_file"]["inputSchema"] == READ_SCHEMA
        assert by_name["list_files"]["inputSchema"] == LIST_SCHEMA
        assert by_name["search"]["inputSchema"] == SEARCH_SCHEMA
        for name, title in (("read_file", "_read"), ("list_files", "_list"),
                            ("search", "_search")):
            assert by_name[name]["outputSchema"] == _output(title)
            assert "task's folder" in by_name[name]["description"]
        assert pipe.request("tools/call", {"name": "read_file", "arguments": {
            "path": "README.md"}})["result"]["content"][0]["text"].endswith("line two")
        assert pipe.request("no/such/method")["error"]["code"] == -32601
    finally:
        assert pipe.close() == 0


def test_read_file_numbers_lines_and_pages(tree):
    pipe = _Pipe(tree)
    try:
        pipe.initialize()
        assert pipe.text("read_file", path="README.md") == "     1\t# sample\n     2\tline two"
        assert pipe.text("read_file", path=str(tree / "src" / "app.py")).startswith(
            "     1\tdef main():")                                  # absolute, but inside
        first = pipe.text("read_file", path="src/long.txt").splitlines()
        assert len(first) == 401 and first[399] == "   400\trow 400"
        assert first[400] == "… 2600 more lines (offset=400)"
        assert pipe.text("read_file", path="src/long.txt", offset=2995, limit=3) == (
            "  2996\trow 2996\n  2997\trow 2997\n  2998\trow 2998\n… 2 more lines (offset=2998)")
        capped = pipe.text("read_file", path="src/long.txt", limit=5000).splitlines()
        assert len(capped) == read_tools.MAX_LINES + 1                 # never more than 2000
        assert capped[-1] == "… 1000 more lines (offset=2000)"
        assert pipe.text("read_file", path="src/long.txt", offset=-3, limit=0) == (
            "     1\trow 1\n… 2999 more lines (offset=1)")
        # integers as pydantic's lax mode took them: a numeric string, a whole float
        assert pipe.text("read_file", path="README.md", offset="1") == "     2\tline two"
        assert pipe.text("read_file", path="README.md", offset=1.0) == "     2\tline two"
        assert pipe.text("read_file", path="inner/app.py", limit=1).startswith(
            "     1\tdef main():")                                  # a link that stays inside
        assert pipe.text("read_file", path="blob.bin") == (                # not UTF-8 text
            "(binary file, 11 bytes: not UTF-8 text, so not shown; search skips it too)")
        assert pipe.text("read_file", path="nope.txt").startswith("error: [Errno 2]")
        assert pipe.text("read_file", path="src").startswith("error: [Errno 21]")
    finally:
        assert pipe.close() == 0


def test_list_files_and_search(tree):
    pipe = _Pipe(tree)
    try:
        pipe.initialize()
        listed = pipe.text("list_files").splitlines()
        assert listed == ["README.md", "blob.bin", "escape", "src/app.py", "src/long.txt"]
        assert pipe.text("list_files", path="src") == "src/app.py\nsrc/long.txt"
        assert pipe.text("list_files", path="inner") == "src/app.py\nsrc/long.txt"
        assert pipe.text("list_files", path="README.md") == "README.md"  # as `ls FILE`

        assert pipe.text("search", pattern="hello") == "src/app.py:2: return 'hello'"  # no bin
        assert pipe.text("search", pattern=r"^row 29\d\d$", path="src").splitlines()[0] == (
            "src/long.txt:2900: row 2900")
        many = pipe.text("search", pattern="row").splitlines()
        assert len(many) == read_tools.MAX_HITS + 1
        assert many[-1] == "… (more matches: narrow the search)"
        assert pipe.text("search", pattern="zzz") == "(no matches)"
        assert pipe.text("search", pattern="(").startswith("error: missing )")
    finally:
        assert pipe.close() == 0


def test_nothing_outside_the_root_can_be_read(tree):
    pipe = _Pipe(tree)
    try:
        pipe.initialize()
        for path in ("../secret.txt", str(tree.parent / "secret.txt"), "/etc/passwd", "escape",
                     "escape-dir/secret.txt", "src/../../secret.txt"):
            assert pipe.text("read_file", path=path) == f"error: {path}: {REFUSED}"
        for path in ("..", "/", "escape-dir"):
            assert pipe.text("list_files", path=path) == f"error: {path}: {REFUSED}"
            assert pipe.text("search", pattern="secret", path=path) == (
                f"error: {path}: {REFUSED}")
        assert "secret" not in pipe.text("list_files")
        assert pipe.text("read_file", path="README.md\x00") == "error: embedded null byte"
    finally:
        assert pipe.close() == 0


def test_search_does_not_follow_a_link_out_of_the_root(tree):
    pipe = _Pipe(tree)
    try:
        pipe.initialize()
        assert pipe.text("search", pattern="secret") == "(no matches)"
        assert pipe.text("search", pattern="secret", path="escape") == f"error: escape: {REFUSED}"
        assert pipe.text("search", pattern="return", path="inner") == (
            "src/app.py:2: return 'hello'")                        # a link that stays inside
        (tree / "loop").symlink_to(tree / "loop")
        assert pipe.text("search", pattern="return") == "src/app.py:2: return 'hello'"
    finally:
        assert pipe.close() == 0


def test_search_and_list_take_a_single_file_as_their_path(tree):
    pipe = _Pipe(tree)
    try:
        pipe.initialize()
        assert pipe.text("search", pattern="two", path="README.md") == "README.md:2: line two"
        assert pipe.text("search", pattern="nowhere", path="README.md") == "(no matches)"
        assert pipe.text("list_files", path="src/app.py") == "src/app.py"
        assert pipe.text("list_files", path="missing") == "(no files)"
    finally:
        assert pipe.close() == 0


def test_bad_calls_are_tool_errors_and_the_server_keeps_serving(tree):
    pipe = _Pipe(tree)
    try:
        pipe.initialize()
        for tool, arguments, word in (("read_file", {}, "path"),
                                      ("read_file", {"path": 3}, "path"),
                                      ("read_file", {"path": "README.md", "offset": "x"},
                                       "offset"),
                                      ("read_file", {"path": "README.md", "limit": 1.5}, "limit"),
                                      ("list_files", {"path": None}, "path"),
                                      ("search", {}, "pattern"),
                                      ("search", {"pattern": 5}, "pattern"),
                                      ("write_file", {"path": "x"}, "write_file")):
            result = pipe.call(tool, **arguments)
            assert result["isError"] is True, (tool, arguments, result)
            assert word in result["content"][0]["text"]
        assert pipe.text("list_files", path="src", extra="ignored") == (
            "src/app.py\nsrc/long.txt")
        assert pipe.request("ping")["result"] == {}
    finally:
        assert pipe.close() == 0


def test_read_tools_do_not_import_the_mcp_sdk():
    script = ("import sys\nfrom baton_tui.channel import read_tools\n"
              "read_tools.build_server(read_tools.Path('.'))\n"
              "print(sorted(m for m in sys.modules if m.split('.')[0] in "
              "{'mcp', 'pydantic', 'pydantic_core', 'anyio', 'starlette', 'httpx'}))")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=60, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_one_enormous_line_is_read_bounded_and_fast(tmp_path):
    """A 50 MB file of one line: read in chunks, its line cut (never held, or sent, whole)."""
    (tmp_path / "huge.txt").write_bytes(b"x" * (50 * 2 ** 20) + b" needle\nafter\n")
    (tmp_path / "small.txt").write_text("a needle\n")
    pipe = _Pipe(tmp_path, deadline=60)
    try:
        pipe.initialize()
        started = time.monotonic()
        first, second = pipe.text("read_file", path="huge.txt").splitlines()
        assert first == ("     1\t" + "x" * read_tools.MAX_LINE_CHARS + "… [line cut: "
                         f"{50 * 2 ** 20 + 7 - read_tools.MAX_LINE_CHARS} more characters not "
                         "shown; read_file shows at most 2000 characters of a line]")
        assert second == "     2\tafter"
        assert pipe.text("read_file", path="huge.txt", offset=1) == "     2\tafter"
        # search looks at the first 2,000 characters of a line, as read_file shows them
        assert pipe.text("search", pattern="needle") == "small.txt:1: a needle"
        assert pipe.text("search", pattern="^x+$") == "huge.txt:1: " + "x" * 200
        assert time.monotonic() - started < 20
    finally:
        assert pipe.close() == 0


def test_a_fifo_socket_or_device_is_never_opened(tree):
    """Opening a FIFO blocks until a writer comes: both tools answer at once instead."""
    os.mkfifo(tree / "pipe")
    (tree / "dev").symlink_to("pipe")                   # a link to it, inside the folder
    pipe = _Pipe(tree, deadline=20)
    try:
        pipe.initialize()
        assert pipe.text("read_file", path="pipe") == (
            "error: pipe: a FIFO, not a regular file: not read")
        assert pipe.text("read_file", path="dev") == (
            "error: dev: a FIFO, not a regular file: not read")
        assert pipe.text("search", pattern="hello") == "src/app.py:2: return 'hello'"
        assert pipe.text("search", pattern="x", path="pipe") == "(no matches)"
        assert "pipe" in pipe.text("list_files").splitlines()   # listed, just never read
        assert pipe.text("read_file", path="README.md").endswith("line two")  # still serving
    finally:
        assert pipe.close() == 0


def test_the_kinds_of_file_refused(tmp_path):
    import socket
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(tmp_path / "s"))
        assert read_tools._guarded(read_tools.read_file, tmp_path, "s") == (
            "error: s: a socket, not a regular file: not read")
    assert read_tools._guarded(read_tools.read_file, Path("/dev"), "null") == (
        "error: null: a character device, not a regular file: not read")


def test_binary_files_are_named_not_shown(tmp_path):
    (tmp_path / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    (tmp_path / "late.txt").write_bytes(b"text\n" * 1000 + b"\xff\n")   # not UTF-8 at the end
    (tmp_path / "utf8.txt").write_text("caf\u00e9 \u65e5\u672c\n")
    assert read_tools.read_file(tmp_path, "image.png") == (
        "(binary file, 1032 bytes: not UTF-8 text, so not shown; search skips it too)")
    assert read_tools.read_file(tmp_path, "late.txt", limit=1) == (
        "(binary file, 5002 bytes: not UTF-8 text, so not shown; search skips it too)")
    assert read_tools.read_file(tmp_path, "utf8.txt") == "     1\tcaf\u00e9 \u65e5\u672c"
    assert read_tools.search(tmp_path, "text|PNG|caf") == "utf8.txt:1: caf\u00e9 \u65e5\u672c"


def test_lines_split_as_before_across_chunk_boundaries(tmp_path, monkeypatch):
    """Read a few bytes at a time, the lines are those `str.splitlines` gave the whole text."""
    text = "a\r\nb\rc\n\x0cd\u2028e\u00e9\u65e5\r\r\nf\x85g\n\nlast"
    (tmp_path / "mixed.txt").write_bytes(text.encode())
    expected = "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(text.splitlines(), 1))
    for chunk in (1, 2, 3, 7, 2 ** 20):
        monkeypatch.setattr(read_tools, "CHUNK", chunk)
        assert read_tools.read_file(tmp_path, "mixed.txt") == expected, chunk
        assert read_tools.search(tmp_path, "^$") == (
            "mixed.txt:4: \nmixed.txt:7: \nmixed.txt:10: ")


def test_what_a_call_reads_is_capped_and_says_how_to_go_on(tmp_path, monkeypatch):
    (tmp_path / "big.txt").write_text("".join(f"row {n}\n" for n in range(1, 1001)))
    monkeypatch.setattr(read_tools, "CHUNK", 64)
    monkeypatch.setattr(read_tools, "MAX_READ_BYTES", 1000)
    shown = read_tools.read_file(tmp_path, "big.txt", limit=5).splitlines()
    assert shown[-1] == ("… more lines (offset=5); read_file reads only the first 1000 bytes "
                         "of a file (here lines 1-138) and this one has 7893 bytes")
    assert read_tools.read_file(tmp_path, "big.txt", offset=137, limit=5).splitlines() == [
        "   138\trow 138", "… stopped at line 138: read_file reads only the first 1000 bytes "
        "of a file and this one has 7893 bytes; the rest is beyond its reach"]
    assert read_tools.read_file(tmp_path, "big.txt", offset=500) == (
        "… stopped at line 138: read_file reads only the first 1000 bytes of a file and this "
        "one has 7893 bytes; the rest is beyond its reach")
    assert read_tools.search(tmp_path, "row 13[89]$") == (      # 139 is past the cap
        "big.txt:138: row 138\n… (1 file searched only in part: a search reads at most 1000 "
        f"bytes of a file and {read_tools.MAX_SEARCH_BYTES} in all)")
    (tmp_path / "wide.txt").write_text(("y" * 50 + "\n") * 100)
    monkeypatch.setattr(read_tools, "MAX_SEARCH_BYTES", 1000)    # spent on big.txt
    assert read_tools.search(tmp_path, "zzz").splitlines()[1:] == [
        "… (1 file searched only in part: a search reads at most 1000 bytes of a file and 1000 "
        "in all)",
        "… (stopped after reading 1000 bytes of files: narrow the search with `path`)"]
    monkeypatch.setattr(read_tools, "MAX_READ_BYTES", 2 ** 20)
    monkeypatch.setattr(read_tools, "MAX_ANSWER_CHARS", 200)
    lines = read_tools.read_file(tmp_path, "wide.txt").splitlines()
    assert len(lines) == 5 and lines[-1] == (
        "… 96 more lines (offset=4) — an answer holds at most 200 characters")


def test_a_search_that_backtracks_forever_is_stopped_and_the_next_one_answers(tmp_path):
    # In a process of its own, single-threaded as the server is (a fork from pytest's
    # threaded worker could inherit a lock another thread holds).
    (tmp_path / "long.txt").write_text("a" * 1500 + "!\n")
    script = ("import json, sys, time\nfrom pathlib import Path\n"
              "from baton_tui.channel import read_tools as rt\n"
              "root, t = Path(sys.argv[1]), time.monotonic()\n"
              "slow = rt.timed(rt.search, 1.0, root, r'(a+)+$')\n"
              "took = time.monotonic() - t\n"
              "print(json.dumps([slow, took, rt.timed(rt.search, 5.0, root, '!$'),\n"
              "                  rt.timed(rt.search, 5.0, root, '(')]))")
    result = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    slow, took, quick, bad = json.loads(result.stdout)
    assert slow.startswith("error: the search took longer than 1 s and was stopped"), slow
    assert took < 5
    assert quick.startswith("long.txt:1: aaa"), quick
    assert bad.startswith("error: missing )"), bad


def test_list_files_names_at_most_a_thousand_files_and_says_there_are_more(tmp_path):
    for i in range(read_tools.MAX_FILES + 5):
        (tmp_path / f"f{i:05}.txt").write_text("x\n")
    lines = read_tools.list_files(tmp_path).splitlines()
    assert len(lines) == read_tools.MAX_FILES + 1
    assert lines[0] == "f00000.txt" and lines[-2] == f"f{read_tools.MAX_FILES - 1:05}.txt"
    assert lines[-1].startswith(f"… (more than {read_tools.MAX_FILES} files")
