"""`baton web`: the URL first, the page only with its token, the protocol's WebSocket only
with the token and from the page's own origin — and out at once when interrupted."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from helpers.ws_client import Refused, WsClient

URL = re.compile(r"^http://127\.0\.0\.1:(\d+)/\?token=([A-Za-z0-9_-]{20,})$")


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


@pytest.fixture
def web(repo):
    """`baton web --port 0` in the repository; (port, token, process)."""
    proc = subprocess.Popen([sys.executable, "-m", "baton_tui", "web", "--port", "0"], cwd=repo,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = proc.stdout.readline().strip()
    match = URL.match(first)
    assert match, (first, proc.stderr.read() if proc.poll() is not None else "")
    yield int(match[1]), match[2], proc
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)


def test_the_url_comes_first_and_the_page_needs_its_token(web):
    port, token, _ = web
    status, body = get(f"http://127.0.0.1:{port}/?token={token}")
    assert status == 200 and '<script src="/browser.js">' in body
    assert get(f"http://127.0.0.1:{port}/")[0] == 403
    assert get(f"http://127.0.0.1:{port}/?token=not-{token}")[0] == 403
    status, script = get(f"http://127.0.0.1:{port}/browser.js")
    assert status == 200 and "Approve…" in script and "Merge all…" in script


def test_the_websocket_is_refused_without_the_token_or_from_another_origin(web):
    port, token, _ = web
    with pytest.raises(Refused) as no_token:
        WsClient(port, "/rpc", origin=f"http://127.0.0.1:{port}")
    assert no_token.value.status in (401, 403)
    with pytest.raises(Refused) as elsewhere:
        WsClient(port, f"/rpc?token={token}", origin="http://evil.example")
    assert elsewhere.value.status == 403


def test_the_websocket_speaks_the_protocol(web, repo):
    port, token, proc = web
    client = WsClient(port, f"/rpc?token={token}", origin=f"http://127.0.0.1:{port}")
    answer = client.request("initialize", {"protocol": 1, "client": {"name": "test", "version": "1"},
                                           "interactive": True})
    assert answer["result"]["protocol"] == 1, answer
    assert Path(answer["result"]["repo"]).resolve() == repo.resolve()
    plan = client.request("plan/get", {})
    assert plan["result"]["plan"] is None, plan
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0
    client.close()


def test_a_port_in_use_is_one_clear_line(repo):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run([sys.executable, "-m", "baton_tui", "web", "--port", str(port)],
                                cwd=repo, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result
    assert result.stdout == ""
    assert f"cannot serve on 127.0.0.1:{port}" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
