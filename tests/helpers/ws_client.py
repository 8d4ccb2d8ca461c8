"""A WebSocket client for tests (RFC 6455, masked frames, text only), standard library only:
speaks to `baton web`'s `/rpc` as a browser would, Origin and all."""

from __future__ import annotations

import base64
import json
import os
import socket
import struct


class Refused(Exception):
    def __init__(self, status: int, body: str):
        super().__init__(f"{status}: {body}")
        self.status = status


class WsClient:
    def __init__(self, port: int, path: str, origin: str | None = None, timeout: float = 60):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        lines = [f"GET {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Upgrade: websocket",
                 "Connection: Upgrade", f"Sec-WebSocket-Key: {key}", "Sec-WebSocket-Version: 13"]
        if origin:
            lines.append(f"Origin: {origin}")
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        self.file = self.sock.makefile("rb")
        status_line = self.file.readline().decode()
        status = int(status_line.split()[1])
        headers = {}
        while (line := self.file.readline().decode().strip()):
            name, _, value = line.partition(":")
            headers[name.lower()] = value.strip()
        if status != 101:
            body = self.file.read(int(headers.get("content-length", 0))).decode()
            self.sock.close()
            raise Refused(status, body)
        self.next_id = 1

    def send_text(self, text: str) -> None:
        data = text.encode()
        mask = os.urandom(4)
        n = len(data)
        head = struct.pack("!BB", 0x81, 0x80 | n) if n < 126 else (
            struct.pack("!BBH", 0x81, 0x80 | 126, n) if n < 65536
            else struct.pack("!BBQ", 0x81, 0x80 | 127, n))
        self.sock.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def recv_text(self) -> str | None:
        """The next text message, or None once the server closed."""
        while True:
            head = self.file.read(2)
            if len(head) < 2:
                return None
            opcode, n = head[0] & 0x0F, head[1] & 0x7F
            if n == 126:
                n = struct.unpack("!H", self.file.read(2))[0]
            elif n == 127:
                n = struct.unpack("!Q", self.file.read(8))[0]
            payload = self.file.read(n)
            if opcode == 0x8:
                return None
            if opcode == 0x1:
                return payload.decode()

    def request(self, method: str, params: dict | None = None) -> dict:
        """One JSON-RPC request; notifications before its answer are kept in `self.notes`."""
        rid = self.next_id
        self.next_id += 1
        self.send_text(json.dumps({"jsonrpc": "2.0", "id": rid, "method": method,
                                   "params": params or {}}))
        self.notes = getattr(self, "notes", [])
        while True:
            text = self.recv_text()
            if text is None:
                raise ConnectionError("closed before the answer")
            message = json.loads(text)
            if message.get("id") == rid:
                return message
            self.notes.append(message)

    def close(self) -> None:
        try:
            self.sock.sendall(struct.pack("!BB", 0x88, 0x80) + os.urandom(4))
        except OSError:
            pass
        self.sock.close()
