"""A scripted ACP agent (newline-delimited JSON-RPC on stdio, written by hand: it may misbehave
in ways an SDK would not let it). usage: acp_agent.py MODE, with ACP_RECORD naming a JSON-lines
file where it writes what its client answered.

  good     plan entries, a tool call, a write inside the worktree through fs/write_text_file,
           `baton report done`, end_turn
  hostile  reads /etc/passwd and writes outside the worktree through fs/*, asks permission to
           edit a file outside, floods 5,000 updates — then does the good work anyway
  silent   never answers initialize
  hang     starts the turn, then waits; on session/cancel records it and ends the turn
  ask      asks permission to edit ok.txt inside the worktree, then does the good work
"""

import json
import os
import subprocess
import sys
import threading

MODE = sys.argv[1]
RECORD = os.environ.get("ACP_RECORD")
out_lock = threading.Lock()
pending: dict[int, dict] = {}
answers: dict[int, threading.Event] = {}
next_id = [1000]


def send(message: dict) -> None:
    with out_lock:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        sys.stdout.flush()


def record(what: str, value) -> None:
    if RECORD:
        with open(RECORD, "a") as fh:
            fh.write(json.dumps({"what": what, "value": value}) + "\n")


def ask(method: str, params: dict) -> dict:
    """A request to the client, waiting for its answer (read by the main loop)."""
    next_id[0] += 1
    ident = next_id[0]
    answers[ident] = threading.Event()
    send({"id": ident, "method": method, "params": params})
    answers[ident].wait()
    return pending.pop(ident)


def update(session: str, body: dict) -> None:
    send({"method": "session/update", "params": {"sessionId": session, "update": body}})


cancelled = threading.Event()


def turn(ident: int, session: str, cwd: str) -> None:
    update(session, {"sessionUpdate": "plan", "entries": [
        {"content": "Read the code", "priority": "high", "status": "completed"},
        {"content": "Write ok.txt", "priority": "high", "status": "in_progress"}]})
    if MODE == "hang":
        record("turn", "started")
        cancelled.wait()
        record("cancel", "received")
        send({"id": ident, "result": {"stopReason": "cancelled"}})
        return
    if MODE == "ask":
        record("permission_inside", ask("session/request_permission", {
            "sessionId": session,
            "toolCall": {"toolCallId": "p0", "title": "Edit ok.txt", "kind": "edit",
                         "locations": [{"path": os.path.join(cwd, "ok.txt")}]},
            "options": [{"optionId": "yes", "name": "Allow", "kind": "allow_once"},
                        {"optionId": "no", "name": "Reject", "kind": "reject_once"}]}))
    if MODE == "hostile":
        record("read_passwd", ask("fs/read_text_file", {"sessionId": session, "path": "/etc/passwd"}))
        outside = os.path.join(os.path.dirname(cwd), "outside.txt")
        record("outside_path", outside)
        record("write_outside", ask("fs/write_text_file", {"sessionId": session, "path": outside,
                                                           "content": "escaped\n"}))
        record("permission_outside", ask("session/request_permission", {
            "sessionId": session,
            "toolCall": {"toolCallId": "p1", "title": "Edit outside", "kind": "edit",
                         "locations": [{"path": outside}]},
            "options": [{"optionId": "yes", "name": "Allow", "kind": "allow_once"},
                        {"optionId": "no", "name": "Reject", "kind": "reject_once"}]}))
        for n in range(5000):
            update(session, {"sessionUpdate": "agent_message_chunk",
                             "content": {"type": "text", "text": f"flood {n} "}})
    update(session, {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Write ok.txt",
                     "kind": "edit", "status": "in_progress",
                     "locations": [{"path": os.path.join(cwd, "ok.txt")}]})
    record("write_inside", ask("fs/write_text_file", {"sessionId": session,
                                                      "path": os.path.join(cwd, "ok.txt"),
                                                      "content": "written over ACP\n"}))
    update(session, {"sessionUpdate": "tool_call_update", "toolCallId": "t1",
                     "status": "completed"})
    update(session, {"sessionUpdate": "agent_message_chunk",
                     "content": {"type": "text", "text": "Wrote ok.txt."}})
    done = subprocess.run(["baton", "report", "done", "--summary", f"{MODE}: wrote ok.txt"],
                          capture_output=True, text=True)
    record("report", done.returncode)
    send({"id": ident, "result": {"stopReason": "end_turn",
                                  "usage": {"totalTokens": 1234, "inputTokens": 1000,
                                            "outputTokens": 234}}})


for line in sys.stdin:
    message = json.loads(line)
    method = message.get("method")
    if method is None:                       # an answer to one of our requests
        pending[message["id"]] = message
        answers[message["id"]].set()
    elif method == "initialize":
        record("initialize", message["params"].get("clientCapabilities"))
        if MODE == "silent":
            continue
        send({"id": message["id"], "result": {"protocolVersion": 1, "agentCapabilities": {},
                                              "agentInfo": {"name": "scripted-acp",
                                                            "version": "1.0"}}})
    elif method == "session/new":
        record("session_new", message["params"])
        send({"id": message["id"], "result": {"sessionId": "sess-1"}})
    elif method == "session/prompt":
        threading.Thread(target=turn, args=(message["id"], message["params"]["sessionId"],
                                            os.getcwd()), daemon=True).start()
    elif method == "session/cancel":
        cancelled.set()
