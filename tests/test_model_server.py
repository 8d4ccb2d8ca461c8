"""The scripted model server, driven over real HTTP on 127.0.0.1 by the official SDKs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import anthropic
import openai
import pytest

from baton_tui.demo.server import ScriptedServer, load_script

REPO_ROOT = Path(__file__).resolve().parents[1]


def _post(url: str, body: dict, headers: dict | None = None) -> tuple[int, dict, bytes]:
    req = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", **(headers or {})},
        method="POST",
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


def _sse_data(raw: bytes) -> list[dict]:
    """Parse an SSE body the way Gemini CLI does: one JSON object per ``data:`` event."""
    events = []
    for block in raw.decode().replace("\r\n", "\n").split("\n\n"):
        data = [line[5:].lstrip() for line in block.split("\n") if line.startswith("data:")]
        if data:
            events.append(json.loads("\n".join(data)))
    return events


# --------------------------------------------------------------------------- Anthropic


def test_anthropic_plain_message():
    with ScriptedServer([{"text": "Hello from the script."}]) as server:
        client = anthropic.Anthropic(base_url=server.url, api_key="x", max_retries=0)
        msg = client.messages.create(
            model="claude-test", max_tokens=100, messages=[{"role": "user", "content": "hi"}]
        )
        assert msg.content[0].type == "text"
        assert msg.content[0].text == "Hello from the script."
        assert msg.stop_reason == "end_turn"
        assert msg.model == "claude-test"
        assert msg.usage.input_tokens > 0
        assert msg.usage.output_tokens == len("Hello from the script.") // 4
        assert server.remaining == []
        [req] = server.requests
        assert req["protocol"] == "anthropic" and req["turn"] == 0
        assert req["json"]["messages"][0]["content"] == "hi"
        # anthropic 2.x sends the key as "Authorization: Bearer"; older SDKs as x-api-key
        secrets = {k: v for k, v in req["headers"].items() if k in ("x-api-key", "authorization")}
        assert secrets and set(secrets.values()) == {"<redacted>"}


def test_anthropic_stream_with_tool_call():
    tool_input = {"file_path": "/tmp/somewhere/hello.txt", "content": "hello from the script\n" * 3}
    turns = [
        {"text": "I will write the file now.", "tool": "Write", "input": tool_input},
        {"text": "done"},
    ]
    with ScriptedServer(turns) as server:
        client = anthropic.Anthropic(base_url=server.url, api_key="x", max_retries=0)
        kinds = []
        with client.messages.stream(
            model="claude-test",
            max_tokens=100,
            messages=[{"role": "user", "content": "create hello.txt"}],
            tools=[{"name": "Write", "input_schema": {"type": "object"}}],
        ) as stream:
            for event in stream:
                kinds.append(event.type)
            final = stream.get_final_message()
        assert "message_start" in kinds and "message_stop" in kinds
        assert final.stop_reason == "tool_use"
        text, tool = final.content
        assert text.text == "I will write the file now."
        assert tool.type == "tool_use" and tool.name == "Write"
        assert tool.id.startswith("toolu_")
        assert tool.input == tool_input
        assert final.usage.output_tokens > 0

        # the tool result goes back on Claude Code's path; the next turn ends the conversation
        status, _, raw = _post(
            server.url + "/v1/messages?beta=true",
            {
                "model": "claude-test",
                "max_tokens": 100,
                "messages": [
                    {"role": "user", "content": "create hello.txt"},
                    {"role": "assistant", "content": [
                        {"type": "tool_use", "id": tool.id, "name": "Write", "input": tool_input}
                    ]},
                    {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": tool.id, "content": "ok"}
                    ]},
                ],
            },
        )
        assert status == 200
        assert json.loads(raw)["content"] == [{"type": "text", "text": "done"}]
        assert [r["turn"] for r in server.requests] == [0, 1]
        assert server.requests[1]["path"].startswith("/v1/messages?beta=true")

        # exhausted: a clean end of turn
        msg = client.messages.create(
            model="claude-test", max_tokens=10, messages=[{"role": "user", "content": "more"}]
        )
        assert msg.content[0].text == "script exhausted"
        assert msg.stop_reason == "end_turn"
        assert server.requests[-1]["side"] == "exhausted"


def test_anthropic_rate_limit_with_reset_headers():
    turns = [
        {
            "error": 429,
            "body": {
                "type": "error",
                "error": {"type": "rate_limit_error", "message": "slow down"},
            },
            "headers": {
                "retry-after": "30",
                "anthropic-ratelimit-unified-status": "rejected",
                "anthropic-ratelimit-unified-reset": "1900000000",
            },
        },
        {"error": 529},
    ]
    with ScriptedServer(turns) as server:
        client = anthropic.Anthropic(base_url=server.url, api_key="x", max_retries=0)
        with pytest.raises(anthropic.RateLimitError) as info:
            client.messages.create(
                model="m", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
            )
        err = info.value
        assert err.status_code == 429
        assert err.response.headers["retry-after"] == "30"
        assert err.response.headers["anthropic-ratelimit-unified-reset"] == "1900000000"
        assert err.response.headers["x-should-retry"] == "false"
        assert err.body["error"]["message"] == "slow down"

        # default body, streamed request: the error comes before any stream starts
        with pytest.raises(anthropic.APIStatusError) as info:
            with client.messages.stream(
                model="m", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
            ) as stream:
                stream.get_final_message()
        assert info.value.status_code == 529
        assert info.value.body["error"]["type"] == "overloaded_error"
        assert server.remaining == []


# --------------------------------------------------------------------------- OpenAI Chat


def test_chat_completions_plain_and_stream_with_tool_calls():
    turns = [
        {"text": "plain answer"},
        {
            "text": "Two calls coming.",
            "tools": [
                {"tool": "write", "input": {"filePath": "/tmp/a.txt", "content": "a" * 60}},
                {"tool": "bash", "input": {"command": "ls -la"}},
            ],
        },
    ]
    with ScriptedServer(turns) as server:
        client = openai.OpenAI(base_url=server.url + "/v1", api_key="x", max_retries=0)
        done = client.chat.completions.create(
            model="mock-model", messages=[{"role": "user", "content": "hi"}]
        )
        assert done.choices[0].message.content == "plain answer"
        assert done.choices[0].finish_reason == "stop"
        assert done.usage.prompt_tokens > 0

        stream = client.chat.completions.create(
            model="mock-model",
            messages=[{"role": "user", "content": "hi"}],
            tools=[{"type": "function", "function": {"name": "write", "parameters": {}}}],
            stream=True,
            stream_options={"include_usage": True},
        )
        text, calls, finish, usage = "", {}, None, None
        for chunk in stream:
            assert chunk.object == "chat.completion.chunk"
            if chunk.usage:
                usage = chunk.usage
            for choice in chunk.choices:
                text += choice.delta.content or ""
                for tc in choice.delta.tool_calls or []:
                    slot = calls.setdefault(tc.index, {"id": None, "name": "", "args": ""})
                    slot["id"] = tc.id or slot["id"]
                    slot["name"] += (tc.function.name or "") if tc.function else ""
                    slot["args"] += (tc.function.arguments or "") if tc.function else ""
                finish = choice.finish_reason or finish
        assert text == "Two calls coming."
        assert finish == "tool_calls"
        assert usage is not None and usage.completion_tokens > 0
        assert [c["name"] for c in calls.values()] == ["write", "bash"]
        assert json.loads(calls[0]["args"]) == turns[1]["tools"][0]["input"]
        assert json.loads(calls[1]["args"]) == {"command": "ls -la"}
        assert all(c["id"].startswith("call_") for c in calls.values())


def test_chat_stream_helper_accumulates_tool_calls():
    turns = [{"tool": "write", "input": {"filePath": "/tmp/b.txt", "content": "b"}}]
    with ScriptedServer(turns) as server:
        client = openai.OpenAI(base_url=server.url + "/v1", api_key="x", max_retries=0)
        with client.chat.completions.stream(
            model="mock-model",
            messages=[{"role": "user", "content": "hi"}],
            tools=[{"type": "function", "function": {"name": "write", "parameters": {}}}],
        ) as stream:
            for _ in stream:
                pass
            final = stream.get_final_completion()
        call = final.choices[0].message.tool_calls[0]
        assert call.function.name == "write"
        assert json.loads(call.function.arguments) == {"filePath": "/tmp/b.txt", "content": "b"}
        assert final.choices[0].finish_reason == "tool_calls"


def test_chat_without_v1_prefix_and_raw_sse_done():
    with ScriptedServer([{"text": "x"}]) as server:
        status, headers, raw = _post(
            server.url + "/chat/completions",
            {"model": "m", "stream": True, "messages": [{"role": "user", "content": "q"}]},
        )
        assert status == 200 and headers["Content-Type"].startswith("text/event-stream")
        assert raw.rstrip().endswith(b"data: [DONE]")


def test_openai_rate_limit_usage_limit_body():
    body = {
        "error": {
            "type": "usage_limit_reached",
            "message": "You have hit your usage limit.",
            "plan_type": "plus",
            "resets_at": 1900000000,
            "resets_in_seconds": 3600,
        }
    }
    turn = {"error": 429, "body": body, "headers": {"retry-after": "3600"}}
    with ScriptedServer([turn]) as server:
        client = openai.OpenAI(base_url=server.url + "/v1", api_key="x", max_retries=0)
        with pytest.raises(openai.RateLimitError) as info:
            client.responses.create(model="m", input="hi", stream=True)
        assert info.value.response.headers["retry-after"] == "3600"
        assert "x-should-retry" not in info.value.response.headers
        assert info.value.body["resets_at"] == 1900000000


# --------------------------------------------------------------------------- OpenAI Responses


def test_responses_stream_function_call_and_namespaced_call():
    turns = [
        {"text": "Running it.", "tool": "exec_command", "input": {"cmd": "printf hi > hello.txt"}},
        {
            "tool": "baton_report",
            "namespace": "mcp__baton",
            "input": {"status": "done", "summary": "wrote hello.txt"},
        },
        {"text": "all done"},
    ]
    with ScriptedServer(turns) as server:
        client = openai.OpenAI(base_url=server.url + "/v1", api_key="x", max_retries=0)

        events = list(
            client.responses.create(model="gpt-test", input="create hello.txt", stream=True)
        )
        kinds = [e.type for e in events]
        assert kinds[:2] == ["response.created", "response.in_progress"]
        assert kinds[-1] == "response.completed"
        for kind in (
            "response.output_item.added",
            "response.content_part.added",
            "response.output_text.delta",
            "response.output_text.done",
            "response.content_part.done",
            "response.function_call_arguments.delta",
            "response.function_call_arguments.done",
            "response.output_item.done",
        ):
            assert kind in kinds
        assert [e.sequence_number for e in events] == list(range(len(events)))
        text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
        assert text == "Running it."
        done = events[-1].response
        assert done.status == "completed"
        assert done.output_text == "Running it."
        call = done.output[1]
        assert call.type == "function_call" and call.name == "exec_command"
        assert call.call_id.startswith("call_")
        assert json.loads(call.arguments) == {"cmd": "printf hi > hello.txt"}
        usage = done.usage
        assert usage.total_tokens == usage.input_tokens + usage.output_tokens
        assert usage.input_tokens_details.cached_tokens == 0
        assert usage.output_tokens_details.reasoning_tokens == 0

        events = list(
            client.responses.create(
                model="gpt-test",
                input=[
                    {"role": "user", "content": "create hello.txt"},
                    {"type": "function_call_output", "call_id": call.call_id, "output": "ok"},
                ],
                stream=True,
            )
        )
        [item] = events[-1].response.output
        assert item.type == "function_call"
        assert item.name == "baton_report" and item.namespace == "mcp__baton"
        added = [e for e in events if e.type == "response.output_item.added"][0]
        assert added.item.namespace == "mcp__baton"

        # non-stream JSON form too
        resp = client.responses.create(model="gpt-test", input="thanks")
        assert resp.output_text == "all done"
        assert [r["turn"] for r in server.requests] == [0, 1, 2]
        assert {r["protocol"] for r in server.requests} == {"responses"}


def test_responses_without_v1_prefix():
    with ScriptedServer([{"text": "ok"}]) as server:
        client = openai.OpenAI(base_url=server.url, api_key="x", max_retries=0)
        assert client.responses.create(model="m", input="hi").output_text == "ok"


# --------------------------------------------------------------------------- Gemini


def test_gemini_stream_sse_and_json():
    turns = [
        {"text": "Writing the file now, as scripted.", "tool": "write_file",
         "input": {"file_path": "/tmp/g.txt", "content": "g"}},
        {"text": "finished"},
        {"text": "array form"},
    ]
    with ScriptedServer(turns) as server:
        body = {"contents": [{"role": "user", "parts": [{"text": "create g.txt"}]}]}
        status, headers, raw = _post(
            server.url + "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse",
            body,
            {"x-goog-api-key": "dummy"},
        )
        assert status == 200 and headers["Content-Type"].startswith("text/event-stream")
        chunks = _sse_data(raw)
        parts = [p for c in chunks for p in c["candidates"][0]["content"]["parts"]]
        assert "".join(p.get("text", "") for p in parts) == "Writing the file now, as scripted."
        calls = [p["functionCall"] for p in parts if "functionCall" in p]
        assert calls == [{"name": "write_file", "args": turns[0]["input"]}]
        assert chunks[-1]["candidates"][0]["finishReason"] == "STOP"
        assert all("finishReason" not in c["candidates"][0] for c in chunks[:-1])
        usage = chunks[-1]["usageMetadata"]
        assert usage["totalTokenCount"] == usage["promptTokenCount"] + usage["candidatesTokenCount"]
        assert server.requests[0]["headers"]["x-goog-api-key"] == "<redacted>"

        status, _, raw = _post(
            server.url + "/v1beta/models/gemini-2.5-pro:generateContent", body
        )
        out = json.loads(raw)
        assert out["candidates"][0]["content"]["parts"] == [{"text": "finished"}]
        assert out["candidates"][0]["finishReason"] == "STOP"

        status, _, raw = _post(
            server.url + "/v1beta/models/gemini-2.5-pro:streamGenerateContent", body
        )
        arr = json.loads(raw)
        assert isinstance(arr, list)
        text = "".join(c["candidates"][0]["content"]["parts"][0]["text"] for c in arr)
        assert text == "array form"
        assert [r["turn"] for r in server.requests] == [0, 1, 2]
        assert [r["protocol"] for r in server.requests] == ["gemini"] * 3


def test_gemini_quota_failure_error():
    body = {
        "error": {
            "code": 429,
            "message": "You exceeded your current quota.",
            "status": "RESOURCE_EXHAUSTED",
            "details": [
                {
                    "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                    "violations": [
                        {"quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier"}
                    ],
                }
            ],
        }
    }
    with ScriptedServer([{"error": 429, "body": body}, {"error": 503}]) as server:
        url = server.url + "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
        msg = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
        status, headers, raw = _post(url, msg)
        assert status == 429 and json.loads(raw) == body
        assert "x-should-retry" not in {k.lower() for k in headers}
        status, _, raw = _post(url, msg)
        assert status == 503 and json.loads(raw)["error"]["status"] == "UNAVAILABLE"


# --------------------------------------------------------------------------- side requests


def test_side_requests_do_not_consume_turns():
    with ScriptedServer([{"text": "the real turn"}], side_text="My Task Title") as server:
        for method in ("HEAD", "GET"):
            req = urllib.request.Request(server.url + "/", method=method)
            with urllib.request.urlopen(req, timeout=5) as resp:
                assert resp.status == 200
        with urllib.request.urlopen(server.url + "/v1/models", timeout=5) as resp:
            assert json.loads(resp.read())["data"][0]["id"]

        client = openai.OpenAI(base_url=server.url + "/v1", api_key="x", max_retries=0)
        assert [m.id for m in client.models.list()]
        title = client.chat.completions.create(
            model="m",
            messages=[
                {"role": "system", "content": "You are a title generator. Output ONLY a title."},
                {"role": "user", "content": "create hello.txt"},
            ],
        )
        assert title.choices[0].message.content == "My Task Title"
        stream = client.chat.completions.create(
            model="m",
            stream=True,
            messages=[{"role": "user", "content": "You are a title generator..."}],
        )
        assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == (
            "My Task Title"
        )

        # Gemini router call: JSON mode with a schema
        router = {
            "contents": [{"role": "user", "parts": [{"text": "classify"}]}],
            "generationConfig": {
                "responseMimeType": "application/json",
                "responseJsonSchema": {
                    "type": "object",
                    "properties": {
                        "complexity_reasoning": {"type": "string"},
                        "complexity_score": {"type": "integer"},
                        "next_speaker": {"type": "string", "enum": ["user", "model"]},
                        "flags": {"type": "array", "items": {"type": "boolean"}},
                    },
                },
            },
        }
        status, _, raw = _post(
            server.url + "/v1beta/models/gemini-3.5-flash-lite:generateContent", router
        )
        obj = json.loads(json.loads(raw)["candidates"][0]["content"]["parts"][0]["text"])
        assert obj == {
            "complexity_reasoning": "simple",
            "complexity_score": 1,
            "next_speaker": "user",
            "flags": [True],
        }
        router["generationConfig"] = {
            "responseMimeType": "application/json",
            "responseSchema": {"type": "OBJECT", "properties": {"n": {"type": "NUMBER"}}},
        }
        status, _, raw = _post(
            server.url + "/v1beta/models/gemini-x:streamGenerateContent?alt=sse", router
        )
        parts = [p for c in _sse_data(raw) for p in c["candidates"][0]["content"]["parts"]]
        text = "".join(p.get("text", "") for p in parts)
        assert json.loads(text) == {"n": 1}

        anth = anthropic.Anthropic(base_url=server.url, api_key="x", max_retries=0)
        assert anth.messages.count_tokens(
            model="m", messages=[{"role": "user", "content": "hi"}]
        ).input_tokens > 0

        assert len(server.remaining) == 1
        assert all(r["turn"] is None for r in server.requests)
        sides = {r["side"] for r in server.requests}
        assert sides == {"probe", "title", "json-mode", "count_tokens"}

        # the real turn is still there
        done = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "create hello.txt"}]
        )
        assert done.choices[0].message.content == "the real turn"
        assert server.remaining == []


def test_match_waits_for_matching_request():
    turns = [{"match": "second prompt", "text": "matched"}, {"text": "after"}]
    with ScriptedServer(turns, side_text="filler") as server:
        client = anthropic.Anthropic(base_url=server.url, api_key="x", max_retries=0)

        def ask(content):
            return client.messages.create(
                model="m", max_tokens=10, messages=[{"role": "user", "content": content}]
            ).content[0].text

        assert ask("first prompt") == "filler"
        assert len(server.remaining) == 2
        assert server.requests[-1]["side"] == "unmatched"
        assert ask([{"type": "text", "text": "the second prompt please"}]) == "matched"
        assert ask("anything") == "after"
        assert ask("anything") == "script exhausted"


# --------------------------------------------------------------------------- log, lifecycle, CLI


def test_request_log_written(tmp_path):
    log = tmp_path / "logs" / "requests.jsonl"
    with ScriptedServer([{"text": "a"}, {"error": 429}], log_path=log) as server:
        client = openai.OpenAI(base_url=server.url + "/v1", api_key="secret", max_retries=0)
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        with pytest.raises(openai.RateLimitError):
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert lines == json.loads(json.dumps(server.requests))
    assert [(r["method"], r["path"], r["protocol"], r["turn"], r["status"]) for r in lines] == [
        ("POST", "/v1/chat/completions", "chat", 0, 200),
        ("POST", "/v1/chat/completions", "chat", 1, 429),
    ]
    assert lines[0]["json"]["messages"] == [{"role": "user", "content": "hi"}]
    assert lines[0]["headers"]["authorization"] == "<redacted>"
    assert "secret" not in log.read_text()


def test_binds_loopback_and_stops():
    server = ScriptedServer([]).start()
    try:
        port = server.port
        assert port > 0
        assert server.url == f"http://127.0.0.1:{port}"
        assert server._httpd.server_address[0] == "127.0.0.1"
        with urllib.request.urlopen(server.url + "/", timeout=5) as resp:
            assert b"not a model" in resp.read()
    finally:
        server.stop()
    server.stop()  # idempotent
    with pytest.raises(OSError):
        urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2)


def test_bad_requests_are_answered_and_logged():
    with ScriptedServer([{"text": "kept"}]) as server:
        req = urllib.request.Request(
            server.url + "/v1/messages", data=b"{not json", method="POST",
            headers={"Content-Type": "application/json"},
        )
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(req, timeout=5)
        assert info.value.code == 400
        status, _, _ = _post(server.url + "/v2/elsewhere", {})
        assert status == 404
        assert len(server.remaining) == 1
        assert [r["status"] for r in server.requests] == [400, 404]


def test_load_script_forms(tmp_path):
    a = tmp_path / "a.json"
    a.write_text(json.dumps([{"text": "x"}]))
    assert load_script(a) == ([{"text": "x"}], None)
    b = tmp_path / "b.json"
    b.write_text(json.dumps({"turns": [{"text": "y"}], "side_text": "T"}))
    assert load_script(b) == ([{"text": "y"}], "T")


def test_cli_prints_port_and_serves_until_sigterm(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": "from the cli"}]))
    log = tmp_path / "req.jsonl"
    port_file = tmp_path / "port"
    proc = subprocess.Popen(
        [sys.executable, "-m", "baton_tui.demo.server", "--script", str(script),
         "--log", str(log), "--port-file", str(port_file)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        cwd=REPO_ROOT,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        port = int(line.strip())
        assert port_file.read_text().strip() == str(port)
        client = anthropic.Anthropic(
            base_url=f"http://127.0.0.1:{port}", api_key="x", max_retries=0
        )
        msg = client.messages.create(
            model="m", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
        )
        assert msg.content[0].text == "from the cli"
        time.sleep(0.3)
        assert proc.poll() is None  # still serving
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert json.loads(log.read_text().splitlines()[0])["turn"] == 0


def test_import_is_light():
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import baton_tui.demo.server"],
        capture_output=True, text=True, env=env, cwd=REPO_ROOT, check=True,
    )
    modules = {}
    for line in out.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = (part.strip() for part in line[len("import time:"):].split("|"))
        if cumulative.isdigit():
            modules[name.strip()] = int(cumulative)
    assert "baton_tui.demo.server" in modules
    heavy = {"anthropic", "openai", "httpx", "pydantic", "mcp", "textual", "rich", "git", "asyncio"}
    assert not heavy & set(modules), heavy & set(modules)
    assert modules["baton_tui.demo.server"] < 300_000  # microseconds; typically ~15 ms


def test_bad_script_fails_at_load():
    for bad in (
        ["not a dict"],
        [{"txt": "typo"}],
        [{"error": "429"}],
        [{"tool": "Write", "input": "not an object"}],
        [{"tools": [{"input": {}}]}],
    ):
        with pytest.raises(ValueError):
            ScriptedServer(bad)
    server = ScriptedServer([{"text": "ok", "comment": "notes are allowed"}])
    with pytest.raises(ValueError):
        server.add_turns([{"bogus": 1}])
    server.add_turns([{"text": "later"}])
    assert [t["text"] for t in server.remaining] == ["ok", "later"]


def test_stop_drops_kept_alive_connections():
    import http.client

    server = ScriptedServer([{"text": "one"}, {"text": "two"}]).start()
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    body = json.dumps(
        {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "q"}]}
    )
    conn.request("POST", "/v1/messages", body, {"Content-Type": "application/json"})
    resp = conn.getresponse()
    assert json.loads(resp.read())["content"][0]["text"] == "one"
    assert resp.getheader("Connection") != "close"  # HTTP/1.1 keep-alive
    server.stop()
    with pytest.raises((OSError, http.client.HTTPException)):
        conn.request("POST", "/v1/messages", body, {"Content-Type": "application/json"})
        conn.getresponse().read()
    assert server.served == 1


def test_a_delayed_turn_keeps_its_caller_waiting_but_not_the_others():
    """`delay`: the turn is taken at once (a test can see the agent is waiting), answered later;
    other requests are answered meanwhile."""
    import threading

    with ScriptedServer([{"delay": 1.5, "text": "slow"}]) as server:
        got = {}

        def slow() -> None:
            got["slow"] = _post(f"{server.url}/v1/chat/completions",
                                {"model": "m", "messages": [{"role": "user", "content": "a"}]})

        started = time.monotonic()
        thread = threading.Thread(target=slow)
        thread.start()
        while server.served == 0:
            time.sleep(0.01)
        probe = urllib.request.urlopen(f"{server.url}/", timeout=5).read()
        assert b"scripted" in probe and time.monotonic() - started < 1.0
        thread.join(10)
        assert got["slow"][0] == 200 and time.monotonic() - started >= 1.5
        assert json.loads(got["slow"][2])["choices"][0]["message"]["content"] == "slow"
    with pytest.raises(ValueError, match="delay"):
        ScriptedServer([{"delay": -1}])
