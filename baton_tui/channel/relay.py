"""The report channel's own socket: how an agent's report reaches the store it cannot write.

Inside the read-only view the store is read-only to an agent (an agent that opens the SQLite
file itself cannot change what Baton records). Its reports and checkpoints travel instead over
a Unix socket in its attempt's folder (`BATON_SOCKET`), served by the attempt's shim — Baton's
process, outside the view, alive exactly as long as the attempt — which checks the attempt id
and nonce as `baton report` always did and writes the store. The shim does not depend on the
conductor: a report made while no conductor runs is recorded at once, and a conductor killed
with SIGKILL loses nothing.

A channel serves its own attempt only. Where it cannot be reached (no socket: an older shim, or
a shim that was killed while its agent ran on), `baton report` writes the store itself when it
can, and otherwise queues the report in the attempt's folder (`report-queued.json`, with its
nonce), which Baton applies when the attempt ends (`queued_report`).

Standard library only: `baton report` imports it on every call.
"""

from __future__ import annotations

import json
import os
import socket
import threading

from baton_tui.core.words import FINAL_REPORTS

SOCKET = "report.sock"
QUEUED = "report-queued.json"
ENV = "BATON_SOCKET"
MAX_REQUEST = 1 << 20
SUN_PATH_MAX = 100  # bytes of a socket path bind and connect take everywhere (108 on Linux)

TYPE_CHECKING = False  # `typing` stays unimported on the report path
if TYPE_CHECKING:
    from baton_tui.store.db import AttemptRow, Store


def _address(path: str) -> tuple[str, int | None]:
    """An address for `path` that fits a socket's path limit: itself, or its folder reached
    through an open descriptor (`/proc/self/fd/N/report.sock`, Linux), which the caller
    closes (the second item)."""
    if len(os.fsencode(path)) < SUN_PATH_MAX or not os.path.isdir("/proc/self/fd"):
        return path, None
    fd = os.open(os.path.dirname(path), os.O_RDONLY | getattr(os, "O_PATH", 0))
    return f"/proc/self/fd/{fd}/{os.path.basename(path)}", fd


def _line(conn: socket.socket) -> bytes:
    data = b""
    while not data.endswith(b"\n") and len(data) <= MAX_REQUEST:
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


# -- the agent's side ----------------------------------------------------------------------------
def ask(env: dict[str, str], request: dict, timeout: float | None = None) -> dict | None:
    """Send `request` over the attempt's channel and return the answer; None when there is
    no channel to reach (the caller falls back)."""
    path = env.get(ENV)
    if not path:
        return None
    request = {**request, "attempt": env.get("BATON_ATTEMPT"), "nonce": env.get("BATON_NONCE"),
               "task": env.get("BATON_TASK")}
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(timeout)
    try:
        address, fd = _address(path)
        try:
            conn.connect(address)
        finally:
            if fd is not None:
                os.close(fd)
        conn.sendall(json.dumps(request).encode() + b"\n")
        answer = json.loads(_line(conn) or b"null")
    except (OSError, ValueError):
        return None
    finally:
        conn.close()
    return answer if isinstance(answer, dict) else None


def queue(env: dict[str, str], payload: dict) -> str | None:
    """Leave `payload` (a report) in the attempt's folder for Baton to apply when the attempt
    ends; the folder written, or None when there is none to write."""
    path = env.get(ENV)
    if not path:
        return None
    folder = os.path.dirname(path)
    record = {"attempt": env.get("BATON_ATTEMPT"), "nonce": env.get("BATON_NONCE"), **payload}
    try:
        tmp = os.path.join(folder, QUEUED + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            json.dump(record, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, os.path.join(folder, QUEUED))
    except OSError:
        return None
    return folder


def queued_report(attempt: "AttemptRow") -> dict | None:
    """A report queued in `attempt`'s folder that carries its nonce (anything else is not
    its agent's), as `AttemptRow.report` holds one; None when there is none."""
    from baton_tui.store.db import nonce_matches  # lazy: only a reportless end asks

    if not attempt.log_path:
        return None
    try:
        with open(os.path.join(os.path.dirname(attempt.log_path), QUEUED)) as fh:
            found = json.load(fh)
    except (OSError, ValueError):
        return None
    if not isinstance(found, dict) or str(found.get("attempt")) != str(attempt.id) \
            or not isinstance(found.get("nonce"), str) \
            or not nonce_matches(found["nonce"], attempt.nonce_hash):
        return None
    if found.get("status") not in FINAL_REPORTS:
        return None
    return {k: v for k, v in found.items() if k not in ("attempt", "nonce")}


# -- the shim's side -----------------------------------------------------------------------------
class Relay:
    """The channel of one attempt: a socket in its folder, served on threads of the shim."""

    def __init__(self, folder: str, attempt_id: int, state: str):
        self.path = os.path.join(folder, SOCKET)
        self.attempt_id, self.state = attempt_id, state
        # One store connection for the attempt's reports, opened at the first and kept (an
        # agent may report every few seconds; a hundred at once should cost a write each).
        self._store: "Store | None" = None
        self._store_lock = threading.Lock()
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            os.unlink(self.path)  # a socket of a shim before (the same attempt adopted)
        except OSError:
            pass
        address, fd = _address(self.path)
        old = os.umask(0o077)
        try:
            self.sock.bind(address)
        finally:
            os.umask(old)
            if fd is not None:
                os.close(fd)
        self.sock.listen(64)
        threading.Thread(target=self._accept, daemon=True, name="baton-relay").start()

    def close(self) -> None:
        try:
            self.sock.close()
            os.unlink(self.path)
        except OSError:
            pass
        with self._store_lock:
            if self._store is not None:
                self._store.close()
                self._store = None

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return  # closed: the attempt is over
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            try:
                request = json.loads(_line(conn) or b"null")
            except ValueError:
                request = None
            answer = self.answer(request) if isinstance(request, dict) else {
                "ok": False, "code": 2, "message": "not a request"}
            conn.sendall(json.dumps(answer).encode() + b"\n")
        except OSError:
            pass  # the agent went away: what it asked is recorded all the same
        finally:
            conn.close()

    def answer(self, request: dict) -> dict:
        """Do what the agent asked, as `baton report` / `baton checkpoint` would in its place:
        a report or an inbox read on the relay's kept connection, one at a time; a checkpoint,
        which waits for the person, on a connection of its own."""
        if request.get("op") == "checkpoint":
            return self._answer(request, None)
        with self._store_lock:
            return self._answer(request, self._kept_store())

    def _kept_store(self) -> "Store | None":
        """The relay's store connection (None when it cannot be opened: the request then opens
        its own and says why it cannot)."""
        if self._store is None:
            from baton_tui.store.db import Store

            try:
                self._store = Store(self.state, create=False, any_thread=True)
            except Exception:  # not (or no longer) a store: `caller_from_env` says so
                return None
        return self._store

    def _answer(self, request: dict, store: "Store | None") -> dict:
        from baton_tui.channel import report as channel  # lazy: the shim imports this first
        from baton_tui.core.errors import BatonError

        env = {"BATON_STATE": self.state, "BATON_ATTEMPT": str(request.get("attempt") or ""),
               "BATON_NONCE": str(request.get("nonce") or "")}
        if request.get("task") is not None:
            env["BATON_TASK"] = str(request["task"])
        caller = None
        try:
            caller = channel.caller_from_env(env, store)  # a foreign nonce is refused, logged
            if caller.attempt.id != self.attempt_id:  # a live attempt's, through another's
                a = caller.attempt
                caller.store.append(a.plan_id, a.task_id, channel.K.TASK_REPORT_REFUSED,
                                    {"attempt": a.id, "why": "through another attempt's "
                                                             "channel"})
                raise BatonError(f"report refused: this channel serves attempt "
                                 f"{self.attempt_id} only")
            op = request.get("op")
            if op == "report":
                message = channel.report(caller, str(request.get("status") or ""),
                                         request.get("message"), until=request.get("until"),
                                         tokens=request.get("tokens"), cost=request.get("cost"))
                return {"ok": True, "code": 0, "message": message}
            if op == "checkpoint":
                wait = request.get("wait")
                code, message = channel.checkpoint(
                    caller, str(request.get("what") or ""), request.get("evidence"),
                    float(wait) if isinstance(wait, (int, float)) else None)
                return {"ok": True, "code": code, "message": message}
            if op == "inbox":
                return {"ok": True, "code": 0, "message": channel.inbox(caller)}
            raise BatonError(f"unknown request {str(op)[:20]!r}")
        except BatonError as exc:
            return {"ok": False, "code": exc.code, "message": exc.message}
        finally:
            if caller is not None and caller.store is not store:
                caller.store.close()
