"""Clients of a real `baton serve` process, for tests/test_serve*.py: over its stdio, its Unix
socket or its WebSocket. Each reads on a thread of its own and keeps answers and notifications
apart; a test waits on a condition (an answer, a notification), never on a sleep."""

from __future__ import annotations

import json
import os
import queue
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

WAIT = 120.0  # generous: CI runs beside two CPU hogs


def baton_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "baton_tui", *args]


class Client:
    """One connection: `call` a method, `notes` received so far, `wait_note` for one."""

    def __init__(self, send: Callable[[str], None]):
        self._send = send
        self._next = 0
        self.answers: dict[Any, dict[str, Any]] = {}
        self.unmatched: list[dict[str, Any]] = []   # answers with a null id (parse errors …)
        self.notifications: list[dict[str, Any]] = []
        self.raw: list[str] = []
        self._cond = threading.Condition()
        self.closed = False

    def feed(self, line: str) -> None:
        message = json.loads(line)
        with self._cond:
            self.raw.append(line)
            if "method" in message:
                self.notifications.append(message)
            elif message.get("id") is None:
                self.unmatched.append(message)
            else:
                self.answers[message["id"]] = message
            self._cond.notify_all()

    def ended(self) -> None:
        with self._cond:
            self.closed = True
            self._cond.notify_all()

    def wait(self, test: Callable[[], Any], timeout: float = WAIT, what: str = "") -> Any:
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                found = test()
                if found:
                    return found
                left = deadline - time.monotonic()
                if left <= 0 or self.closed:
                    raise AssertionError(f"waited for {what or test}; last lines: {self.raw[-5:]}")
                self._cond.wait(min(left, 1.0))

    def send_raw(self, line: str) -> None:
        self._send(line)

    def request(self, method: str, params: dict[str, Any] | None = None) -> int:
        self._next += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next, "method": method}
        if params is not None:
            message["params"] = params
        self._send(json.dumps(message))
        return self._next

    def answer(self, id_: int, timeout: float = WAIT) -> dict[str, Any]:
        return self.wait(lambda: self.answers.get(id_), timeout, f"answer {id_}")

    def call(self, method: str, params: dict[str, Any] | None = None, timeout: float = WAIT) -> Any:
        """The result; an error answer fails the test with its message."""
        got = self.answer(self.request(method, params), timeout)
        assert "result" in got, f"{method}: {got.get('error')}"
        return got["result"]

    def error(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        got = self.answer(self.request(method, params))
        assert "error" in got, f"{method} answered {got}"
        return got["error"]

    def notes(self, method: str) -> list[dict[str, Any]]:
        with self._cond:
            return [n["params"] for n in self.notifications if n["method"] == method]

    def wait_note(self, method: str, test: Callable[[dict[str, Any]], bool] = lambda p: True,
                  timeout: float = WAIT) -> dict[str, Any]:
        return self.wait(lambda: next((p for p in self.notes(method) if test(p)), None),
                         timeout, f"a {method} notification")

    def events(self) -> list[dict[str, Any]]:
        return self.notes("event")

    def wait_event(self, kind: str, task: int | None = None, timeout: float = WAIT) -> dict[str, Any]:
        return self.wait_note("event", lambda e: e["kind"] == kind and (task is None or e["task"] == task),
                              timeout)

    def initialize(self, interactive: bool = True, name: str = "test") -> dict[str, Any]:
        return self.call("initialize", {"protocol": 1, "client": {"name": name},
                                        "interactive": interactive})


class StdioServer:
    """`baton serve --stdio` as a child process; `client` speaks to it."""

    def __init__(self, cwd: Path, *extra: str, env: dict[str, str] | None = None):
        self.proc = subprocess.Popen(baton_argv("serve", *extra), cwd=cwd, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env={**os.environ, **(env or {})})
        assert self.proc.stdin and self.proc.stdout
        self._lock = threading.Lock()
        self.client = Client(self._write)
        self.stderr: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._errors, daemon=True).start()

    def _write(self, line: str) -> None:
        assert self.proc.stdin
        with self._lock:
            self.proc.stdin.write(line.encode() + b"\n")
            self.proc.stdin.flush()

    def write_bytes(self, data: bytes) -> None:
        assert self.proc.stdin
        with self._lock:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()

    def _read(self) -> None:
        assert self.proc.stdout
        for line in self.proc.stdout:
            self.client.feed(line.decode())
        self.client.ended()

    def _errors(self) -> None:
        assert self.proc.stderr
        for line in self.proc.stderr:
            self.stderr.append(line.decode(errors="replace"))

    def close(self) -> int:
        assert self.proc.stdin
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            return self.proc.wait(WAIT)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


class ListeningServer:
    """`baton serve --socket PATH` or `--listen URL`: its first line says where it listens."""

    def __init__(self, cwd: Path, *args: str):
        self.proc = subprocess.Popen(baton_argv("serve", *args), cwd=cwd, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        assert self.proc.stdout
        self.first_line = self.proc.stdout.readline().decode().strip()

    def stop(self) -> int:
        self.proc.terminate()
        try:
            return self.proc.wait(WAIT)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


def socket_client(path: Path) -> tuple[Client, socket.socket]:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(str(path))
    lock = threading.Lock()

    def send(line: str) -> None:
        with lock:
            sock.sendall(line.encode() + b"\n")

    client = Client(send)

    def read() -> None:
        with sock.makefile("rb") as lines:
            try:
                for line in lines:
                    client.feed(line.decode())
            except OSError:
                pass
        client.ended()

    threading.Thread(target=read, daemon=True).start()
    return client, sock


def websocket_client(url: str, origin: str | None = None) -> tuple[Client, Any]:
    from websockets.sync.client import connect

    headers = {"Origin": origin} if origin else None
    ws = connect(url, additional_headers=headers, max_size=None)
    client = Client(ws.send)

    def read() -> None:
        try:
            for message in ws:
                client.feed(message if isinstance(message, str) else message.decode())
        except Exception:  # closed
            pass
        client.ended()

    threading.Thread(target=read, daemon=True).start()
    return client, ws


def drain(q: "queue.Queue[Any]") -> list[Any]:
    out = []
    while not q.empty():
        out.append(q.get_nowait())
    return out
