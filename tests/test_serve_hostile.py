"""`baton serve` under hostile input: a 10 MB line, bytes that are not UTF-8, a storm of
10,000 requests, a client that never reads, a connection dropped mid-run. Each gets one clear
error (or nothing at all), and the server — and the run — go on."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

import pytest

from helpers.run_kit import load_plan, script_agent, task, write_config
from helpers.serve_kit import ListeningServer, StdioServer, socket_client

pytestmark = pytest.mark.slow


def test_a_huge_line_and_bytes_that_are_not_utf8_get_one_error_each(repo):
    server = StdioServer(repo)
    c = server.client
    try:
        c.initialize()
        server.write_bytes(b'{"jsonrpc":"2.0","id":99,"method":"status/get","params":{"x":"'
                           + b"a" * (10 << 20) + b'"}}\n')
        server.write_bytes(b'{"jsonrpc":"2.0","id":98,"method":"status/get","params":{"x":"\xff\xfe"}}\n')
        server.write_bytes(b'[{"jsonrpc":"2.0","id":97,"method":"status/get"}]\n')
        server.write_bytes(b'{"jsonrpc":"2.0","id":96,"method":"status/get","params":[1]}\n')
        errors = c.wait(lambda: c.unmatched[2:] and c.unmatched)
        too_large, not_utf8, batch = (e["error"] for e in errors[:3])
        assert too_large["code"] == -32600 and "too large" in too_large["message"]
        assert not_utf8["code"] == -32700 and "UTF-8" in not_utf8["message"]
        assert batch["code"] == -32600 and "one request object per line" in batch["message"]
        assert c.answer(96)["error"]["code"] == -32602
        assert 99 not in c.answers and 98 not in c.answers
        assert c.call("status/get")["plan"] is None  # still serving
    finally:
        assert server.close() == 0


def test_a_storm_of_ten_thousand_requests_is_answered_in_full(repo):
    server = StdioServer(repo)
    c = server.client
    try:
        c.initialize()
        lines = [json.dumps({"jsonrpc": "2.0", "id": 1000 + n, "method": "plan/get"})
                 for n in range(10_000)]
        server.write_bytes(("\n".join(lines) + "\n").encode())
        c.wait(lambda: len(c.answers) >= 10_001, timeout=600)
        assert all("result" in c.answers[1000 + n] for n in range(10_000))
    finally:
        assert server.close() == 0


def busy_project(repo, baton, tmp_path, seconds: float):
    steps = [{"print": f"line {n} " + "x" * 200} for n in range(200)]
    agent = script_agent(tmp_path, "busy", {
        "*": [*steps, {"sleep": seconds}, {"write": "done.txt", "content": "ok\n"},
              {"report": "done", "summary": "busy work"}]})
    write_config(repo, {"agent": agent})
    load_plan(baton, [task(1)], approve=True)


def test_a_client_that_never_reads_is_told_it_lagged_and_nothing_else_slows(repo, baton, tmp_path):
    """One socket client reads nothing while a task streams; another follows every event. The
    run lands, the reader misses nothing, and the silent client — once it reads — finds one
    `lagged` or everything, and catches up from its cursor."""
    busy_project(repo, baton, tmp_path, 0.5)
    path = tmp_path / "s.sock"
    server = ListeningServer(repo, "--socket", str(path))
    try:
        silent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        silent.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        silent.connect(str(path))
        silent.sendall(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocol":1}}\n'
                       b'{"jsonrpc":"2.0","id":2,"method":"events/subscribe","params":{"cursor":0}}\n')
        # ... and a flood of requests it never reads the answers to
        flood = b"".join(b'{"jsonrpc":"2.0","id":%d,"method":"status/get"}\n' % n
                         for n in range(3, 3003))
        silent.setblocking(False)
        try:
            silent.sendall(flood)
        except BlockingIOError:
            pass  # its sending stalls too, as it should: the server stops reading it
        reader, sock = socket_client(path)
        reader.initialize()
        reader.call("events/subscribe", {"cursor": 0})
        assert baton("run", "--detach").returncode == 0
        reader.wait_event("task.landed", 1, timeout=300)
        assert baton.json("status", "--json")["tasks"][0]["state"] == "landed"
        cursors = [e["cursor"] for e in reader.events()]
        assert cursors == sorted(set(cursors))
        sock.close()
        silent.close()
        again, sock = socket_client(path)  # the server still serves
        again.initialize()
        assert again.call("status/get")["tasks"][0]["state"] == "landed"
        sock.close()
    finally:
        server.stop()


def test_lagged_then_caught_up_from_the_cursor(repo, baton, tmp_path):
    """Events pile up past the high-water mark for a client that does not read: it is told
    `lagged {cursor}` once, and `events/subscribe {cursor}` brings it every event after."""
    load_plan(baton, [task(1, player="claude-code")], trust=False)
    path = tmp_path / "s.sock"
    server = ListeningServer(repo, "--socket", str(path))
    try:
        slow = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        slow.connect(str(path))
        slow.sendall(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocol":1}}\n'
                     b'{"jsonrpc":"2.0","id":2,"method":"events/subscribe","params":{"cursor":0}}\n')
        script = ("from baton_tui import api\nws = api.open_workspace()\n"
                  "for n in range(3000):\n    api.edit_task(ws, 1, 'prompt', f'p{n} ' + 'x' * 180)\n")
        subprocess.run([sys.executable, "-c", script], cwd=repo, check=True, timeout=600)
        buffer = b""
        slow.settimeout(120)
        deadline = time.monotonic() + 300
        lagged = None
        while lagged is None and time.monotonic() < deadline:
            buffer += slow.recv(1 << 16)
            for line in buffer.split(b"\n")[:-1]:
                message = json.loads(line)
                if message.get("method") == "lagged":
                    lagged = message["params"]["cursor"]
        assert lagged is not None, "a client that fell behind is told so"
        slow.close()
        client, sock = socket_client(path)
        client.initialize()
        client.call("events/subscribe", {"cursor": lagged})
        last = baton.json("status", "--json")
        edits = client.wait(lambda: [e for e in client.events()
                                     if str(e["data"].get("value")).startswith("p2999 ")])
        assert edits and last["plan"] is not None
        cursors = [e["cursor"] for e in client.events()]
        assert cursors[0] == lagged + 1 and cursors == list(range(lagged + 1, cursors[-1] + 1))
        sock.close()
    finally:
        server.stop()


def test_a_connection_dropped_mid_run_leaves_the_run_unaffected(repo, baton, tmp_path):
    busy_project(repo, baton, tmp_path, 1.0)
    server = StdioServer(repo)
    server.client.initialize()
    server.client.call("events/subscribe", {"cursor": 0})
    assert baton("run", "--detach").returncode == 0
    server.client.wait_event("task.started", 1, timeout=300)
    server.proc.kill()  # the editor's window closes mid-run
    server.proc.wait()
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        state = baton.json("status", "--json")["tasks"][0]["state"]
        if state == "landed":
            break
        time.sleep(0.2)
    assert state == "landed"
