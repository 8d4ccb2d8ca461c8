"""The server side of RFC 6455 WebSocket framing, standard library only: the handshake's
accept key, reading a client's (masked) messages and writing unmasked text frames."""

from __future__ import annotations

import base64
import hashlib
import struct
from typing import BinaryIO, Callable

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
MAX_MESSAGE = 16 * 1024 * 1024  # a request larger than this is not a person's click
TEXT, BINARY, CLOSE, PING, PONG, CONTINUATION = 0x1, 0x2, 0x8, 0x9, 0xA, 0x0


class Closed(Exception):
    """The peer closed the connection (a close frame, or the stream ended)."""


def accept_key(key: str) -> str:
    return base64.b64encode(hashlib.sha1((key + GUID).encode()).digest()).decode()


def _exactly(stream: BinaryIO, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = stream.read(n - len(data))
        if not chunk:
            raise Closed("the stream ended")
        data += chunk
    return data


def read_frame(stream: BinaryIO) -> tuple[bool, int, bytes]:
    """One frame: (final, opcode, payload). Client frames must be masked."""
    head = _exactly(stream, 2)
    final, opcode = bool(head[0] & 0x80), head[0] & 0x0F
    masked, length = bool(head[1] & 0x80), head[1] & 0x7F
    if length == 126:
        length = struct.unpack("!H", _exactly(stream, 2))[0]
    elif length == 127:
        length = struct.unpack("!Q", _exactly(stream, 8))[0]
    if not masked:
        raise Closed("an unmasked client frame")
    if length > MAX_MESSAGE:
        raise Closed("a frame too large")
    mask = _exactly(stream, 4)
    payload = bytearray(_exactly(stream, length))
    for i in range(length):
        payload[i] ^= mask[i % 4]
    return final, opcode, bytes(payload)


def read_message(stream: BinaryIO, reply: Callable[[int, bytes], None]) -> str:
    """The next text message (fragments joined); pings are answered through `reply`."""
    parts: list[bytes] = []
    while True:
        final, opcode, payload = read_frame(stream)
        if opcode == CLOSE:
            raise Closed("closed by the peer")
        if opcode == PING:
            reply(PONG, payload)
            continue
        if opcode == PONG:
            continue
        parts.append(payload)
        if sum(len(p) for p in parts) > MAX_MESSAGE:
            raise Closed("a message too large")
        if final:
            return b"".join(parts).decode("utf-8", "replace")


def frame(opcode: int, payload: bytes) -> bytes:
    """One unmasked, final frame (a server's frames are never masked)."""
    n = len(payload)
    if n < 126:
        head = struct.pack("!BB", 0x80 | opcode, n)
    elif n < 1 << 16:
        head = struct.pack("!BBH", 0x80 | opcode, 126, n)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, 127, n)
    return head + payload
