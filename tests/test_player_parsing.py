"""Claude Code and Codex adapters: event parsing on recorded lines, command lines, detection.

The recorded lines below are real output of Claude Code 2.1.197 (2.1.332, the pinned build,
emits the same events) and Codex 0.171.0, run against Baton's scripted model server (the init
event's long tool and skill lists trimmed). The subscriber-limit lines follow Claude Code's
documented wording and its `rate_limit_event` schema, since an API key cannot produce them.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest

from baton_tui.players.base import AttemptContext
from baton_tui.players.builtin import BUILTIN_CLASSES
from baton_tui.players.limits import claude_reset, codex_reset

ClaudeCodePlayer = BUILTIN_CLASSES["claude-code"]
CodexPlayer = BUILTIN_CLASSES["codex"]

CLAUDE_OK = r'''
{"type":"system","subtype":"init","cwd":"/tmp/exp/repo","session_id":"c64017b5-ede0-4eac-ad25-de9009bb373b","mcp_servers":[],"model":"claude-opus-4-8[1m]","permissionMode":"bypassPermissions","tools":["Bash","Edit","Read","Write"]}
{"type":"assistant","message":{"id":"msg_01facd9a7ed411cbfed5e020","type":"message","role":"assistant","model":"claude-opus-4-8","content":[{"type":"text","text":"Writing"}],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":19072,"output_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":0},"context_management":null},"parent_tool_use_id":null,"session_id":"c64017b5-ede0-4eac-ad25-de9009bb373b","uuid":"71bf380e-33a0-4e88-a5ea-70b9a7234c2d"}
{"type":"assistant","message":{"id":"msg_01facd9a7ed411cbfed5e020","type":"message","role":"assistant","model":"claude-opus-4-8","content":[{"type":"tool_use","id":"toolu_01d2c12185a64732e694d33d","name":"Write","input":{"file_path":"/tmp/exp/repo/a.txt","content":"hi\n"}}],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":19072,"output_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":0},"context_management":null},"parent_tool_use_id":null,"session_id":"c64017b5-ede0-4eac-ad25-de9009bb373b","uuid":"2b655569-b997-46e1-9403-7e7561226f1a"}
{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_01d2c12185a64732e694d33d","type":"tool_result","content":"File created successfully at: /tmp/exp/repo/a.txt (file state is current in your context — no need to Read it back)"}]},"parent_tool_use_id":null,"session_id":"c64017b5-ede0-4eac-ad25-de9009bb373b","uuid":"f3b84167-e882-4e5a-b97e-8ec135326787","timestamp":"2026-11-30T01:24:17.116Z","tool_use_result":{"type":"create","filePath":"/tmp/exp/repo/a.txt","content":"hi\n","structuredPatch":[],"originalFile":null,"userModified":false}}
{"type":"assistant","message":{"id":"msg_01bd5c60e503e6efaf102505","type":"message","role":"assistant","model":"claude-opus-4-8","content":[{"type":"text","text":"All done."}],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":19179,"output_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":0},"context_management":null},"parent_tool_use_id":null,"session_id":"c64017b5-ede0-4eac-ad25-de9009bb373b","uuid":"a551b062-3ec4-4e87-809f-653e9c9477d5"}
{"type":"result","subtype":"success","is_error":false,"api_error_status":null,"duration_ms":480,"duration_api_ms":137,"ttft_ms":361,"ttft_stream_ms":361,"time_to_request_ms":316,"num_turns":2,"result":"All done.","stop_reason":"end_turn","session_id":"c64017b5-ede0-4eac-ad25-de9009bb373b","total_cost_usd":0.19165500000000002,"usage":{"input_tokens":38251,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":16,"server_tool_use":{"web_search_requests":0,"web_fetch_requests":0},"service_tier":"standard","cache_creation":{"ephemeral_1h_input_tokens":0,"ephemeral_5m_input_tokens":0},"inference_geo":"","iterations":[],"speed":"standard"},"permission_denials":[],"terminal_reason":"completed","fast_mode_state":"off","uuid":"59520bc0-d2f3-4c72-beba-4859dcc59bfa"}
'''

CLAUDE_429 = r'''
{"type":"system","subtype":"init","cwd":"/tmp/exp/repo","session_id":"0cc41b59-ac9d-4582-9237-aaffdf57fdc2","mcp_servers":[],"model":"claude-opus-4-8[1m]","permissionMode":"bypassPermissions","tools":["Bash","Edit","Read","Write"]}
{"type":"assistant","message":{"id":"da70d94c-2e14-4af4-aea0-51a054e9b38d","container":null,"model":"<synthetic>","role":"assistant","stop_details":null,"stop_reason":"stop_sequence","stop_sequence":"","type":"message","usage":{"input_tokens":0,"output_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"server_tool_use":{"web_search_requests":0,"web_fetch_requests":0},"service_tier":null,"cache_creation":{"ephemeral_1h_input_tokens":0,"ephemeral_5m_input_tokens":0},"inference_geo":null,"iterations":null,"speed":null},"content":[{"type":"text","text":"API Error: Request rejected (429) · scripted error 429"}],"context_management":null},"parent_tool_use_id":null,"session_id":"0cc41b59-ac9d-4582-9237-aaffdf57fdc2","uuid":"17c484d3-4e07-4e33-8bf9-07675d2e2f33","error":"rate_limit","request_id":"req_e0b2f129f787f2b1221749f1"}
{"type":"result","subtype":"success","is_error":true,"api_error_status":429,"duration_ms":228,"duration_api_ms":0,"num_turns":1,"result":"API Error: Request rejected (429) · scripted error 429","stop_reason":"stop_sequence","session_id":"0cc41b59-ac9d-4582-9237-aaffdf57fdc2","total_cost_usd":0,"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0,"server_tool_use":{"web_search_requests":0,"web_fetch_requests":0},"service_tier":"standard","cache_creation":{"ephemeral_1h_input_tokens":0,"ephemeral_5m_input_tokens":0},"inference_geo":"","iterations":[],"speed":"standard"},"permission_denials":[],"terminal_reason":"completed","fast_mode_state":"off","uuid":"7636c1ee-5077-4b82-8632-4205e6d89042"}
'''

CODEX_OK = r'''
{"type":"thread.started","thread_id":"01a22a0d-91f4-7e01-b6d7-659845b7ec5b"}
{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for `gpt-5.1-codex` not found. Defaulting to fallback metadata; this can degrade performance and cause issues."}}
{"type":"turn.started"}
{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"/bin/bash -c 'printf hi > a.txt'","aggregated_output":"","exit_code":null,"status":"in_progress"}}
{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"/bin/bash -c 'printf hi > a.txt'","aggregated_output":"","exit_code":0,"status":"completed"}}
{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"All done."}}
{"type":"turn.completed","usage":{"input_tokens":20306,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":8,"reasoning_output_tokens":0}}
'''

CODEX_429 = r'''
{"type":"thread.started","thread_id":"01a22a0d-96b4-7221-9baf-5cc459560243"}
{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for `gpt-5.1-codex` not found. Defaulting to fallback metadata; this can degrade performance and cause issues."}}
{"type":"turn.started"}
{"type":"error","message":"exceeded retry limit, last status: 429 Too Many Requests"}
{"type":"turn.failed","error":{"message":"exceeded retry limit, last status: 429 Too Many Requests"}}
'''

CODEX_LIMIT = r'''
WARNING: proceeding, even though we could not create PATH aliases: Refusing to create helper binaries under temporary dir "/tmp"
Reading additional input from stdin...
{"type":"thread.started","thread_id":"01a229fc-d6fa-71f3-a6f3-2d1d1763ab8a"}
{"type":"turn.started"}
{"type":"error","message":"You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again at 1:06 AM."}
{"type":"turn.failed","error":{"message":"You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again at 1:06 AM."}}
'''

CODEX_MCP = r'''
{"type":"item.started","item":{"id":"item_2","type":"mcp_tool_call","server":"baton","tool":"baton_report","arguments":{"status":"done","summary":"wrote hello.txt (mcp)"},"result":null,"error":null,"status":"in_progress"}}
'''


def subscriber_limit(session: str, text: str, resets_at: int | None) -> str:
    lines = [{"type": "system", "subtype": "init", "session_id": session,
              "model": "claude-opus-4-8"}]
    if resets_at is not None:
        lines.append({"type": "rate_limit_event", "rate_limit_info": {
            "status": "rejected", "resetsAt": resets_at, "rateLimitType": "five_hour"},
            "session_id": session})
    lines.append({"type": "assistant", "message": {"id": "m1", "model": "<synthetic>",
                  "role": "assistant", "content": [{"type": "text", "text": text}]},
                  "session_id": session})
    lines.append({"type": "result", "subtype": "success", "is_error": True,
                  "api_error_status": 429, "result": text, "session_id": session,
                  "total_cost_usd": 0, "usage": {"input_tokens": 0, "output_tokens": 0}})
    return "\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n"


@pytest.fixture
def utc(monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def ctx(tmp_path: Path, mode: str = "build", **kw) -> AttemptContext:
    attempt = tmp_path / "attempt"
    attempt.mkdir(exist_ok=True)
    env = {"BATON_TASK": "3", "BATON_ATTEMPT": "7", "BATON_NONCE": "n0nce",
           "BATON_STATE": "/repo/.git/baton/baton.db", "PATH": "/shim:/usr/bin"}
    return AttemptContext(task_id=3, mode=mode, prompt_path=attempt / "prompt.md",
                          prompt=kw.pop("prompt", "# Task 3: x\n\nDo it."),
                          worktree=tmp_path / "wt", attempt_dir=attempt, env=env, **kw)


# --------------------------------------------------------------------------- Claude Code

def test_claude_success_outcome_and_progress():
    player = ClaudeCodePlayer()
    out = player.outcome("some stderr noise\n" + CLAUDE_OK)
    assert out.session_id == "c64017b5-ede0-4eac-ad25-de9009bb373b"
    assert out.success_event is True and out.error is None
    assert out.tokens == 38251 + 16 and out.cost == pytest.approx(0.191655)
    assert out.final_text == "All done."
    assert out.limit_until is None and not out.rate_limited
    lines = [player.progress(line) for line in CLAUDE_OK.strip().splitlines()]
    assert lines[0] == "claude started (model claude-opus-4-8[1m])"
    assert lines[1] == "Writing"
    assert lines[2] == "Write /tmp/exp/repo/a.txt"
    assert lines[3] is None
    assert lines[5] == "finished (2 turns)"
    assert player.progress("not json") is None


def test_claude_429_is_rate_limited_without_a_reset():
    out = ClaudeCodePlayer().outcome(CLAUDE_429)
    assert out.success_event is False
    assert out.rate_limited is True and out.limit_until is None
    assert out.error == "API Error: Request rejected (429) · scripted error 429"
    assert out.session_id == "0cc41b59-ac9d-4582-9237-aaffdf57fdc2"


def test_claude_subscriber_limit_uses_the_exact_reset_when_sent():
    log = subscriber_limit("s1", "You've hit your session limit · resets 3pm (UTC)", 1_900_000_000)
    out = ClaudeCodePlayer().outcome(log)
    assert out.limit_until == 1_900_000_000
    assert out.session_id == "s1" and not out.rate_limited


def test_claude_subscriber_limit_from_its_wording_alone():
    now = time.time()
    out = ClaudeCodePlayer().outcome(
        subscriber_limit("s2", "You've hit your weekly limit · resets 3:30pm (Europe/Berlin)",
                         None))
    assert out.limit_until is not None and now - 400 < out.limit_until < now + 26 * 3600
    assert not out.rate_limited


def test_claude_limit_warning_on_a_successful_run_is_not_a_stop():
    log = CLAUDE_OK + json.dumps({"type": "rate_limit_event", "rate_limit_info": {
        "status": "allowed_warning", "resetsAt": 1_900_000_000}}) + "\n"
    assert ClaudeCodePlayer().outcome(log).limit_until is None


@pytest.mark.parametrize("text, now, expected", [
    # same day, on the hour / with minutes; the minute shown is padded by 60 s
    ("You've hit your session limit · resets 3pm (UTC)", "2026-11-30 10:00", "2026-11-30 15:01"),
    ("You've hit your Opus limit · resets 3:30pm (UTC)", "2026-11-30 10:00", "2026-11-30 15:31"),
    # a time earlier than now means tomorrow
    ("You've hit your session limit · resets 2am (UTC)", "2026-11-30 10:00", "2026-12-01 02:01"),
    # a minute just passed (the message is read a moment late) means now, not tomorrow
    ("You've hit your session limit · resets 9:59am (UTC)", "2026-11-30 10:00",
     "2026-11-30 10:00"),
    # more than a day away: month and day, optionally the year
    ("You've hit your weekly limit · resets Dec 4, 5pm (UTC)", "2026-11-30 10:00",
     "2026-12-04 17:01"),
    ("You've hit your weekly limit · resets Jan 2, 2027, 5:15pm (UTC)", "2026-11-30 10:00",
     "2027-01-02 17:16"),
    # another zone: 3pm in New York is 20:00 UTC in winter
    ("You've hit your limit · resets 3pm (America/New_York)", "2026-11-30 10:00",
     "2026-11-30 20:01"),
    # older builds put the epoch after a bar
    ("Claude AI usage limit reached|1900000000", "2026-11-30 10:00", 1900000000),
])
def test_claude_reset_wording(text, now, expected):
    from zoneinfo import ZoneInfo

    def epoch(s: str) -> float:
        return datetime.strptime(s, "%Y-%m-%d %H:%M").replace(tzinfo=ZoneInfo("UTC")).timestamp()

    want = expected if isinstance(expected, int) else epoch(expected)
    assert claude_reset(text, epoch(now)) == want


def test_claude_build_command(tmp_path):
    player = ClaudeCodePlayer("/opt/claude")
    launch = player.launch(ctx(tmp_path, model="sonnet", effort="high"))
    argv = launch.argv
    assert argv[0] == "/opt/claude" and argv[1] == "-p"
    assert argv[-2:] == ["--", "# Task 3: x\n\nDo it."]        # the prompt is one argv element
    for flag in ("--output-format", "--verbose", "--dangerously-skip-permissions",
                 "--strict-mcp-config", "--append-system-prompt", "--session-id"):
        assert flag in argv
    assert argv[argv.index("--model") + 1] == "sonnet"
    assert argv[argv.index("--effort") + 1] == "high"
    assert "mcp__baton__baton_report" in argv[argv.index("--allowedTools") + 1]
    config_path = Path(argv[argv.index("--mcp-config") + 1])
    assert config_path.parent == tmp_path / "attempt"          # per attempt, never ~/.claude
    assert stat.S_IMODE(config_path.stat().st_mode) == 0o600
    server = json.loads(config_path.read_text())["mcpServers"]["baton"]
    assert [server["command"], *server["args"]] == [sys.executable, "-P", "-m", "baton_tui", "mcp"]
    assert server["env"] == {"BATON_TASK": "3", "BATON_ATTEMPT": "7", "BATON_NONCE": "n0nce",
                             "BATON_STATE": "/repo/.git/baton/baton.db"}
    assert launch.stdin_prompt is False
    assert (launch.env.get("IS_SANDBOX") == "1") == (os.geteuid() == 0)


def test_claude_research_may_run_commands_but_not_edit_and_the_planner_only_reads(tmp_path):
    player = ClaudeCodePlayer("claude")
    argv = player.launch(ctx(tmp_path, mode="research")).argv
    assert argv[argv.index("--tools") + 1] == "Read,Grep,Glob,Bash"     # no Write, no Edit
    assert argv[argv.index("--permission-mode") + 1] == "dontAsk"
    assert argv[argv.index("--allowedTools") + 1] == \
        "mcp__baton__baton_report,mcp__baton__baton_inbox,Bash"
    assert "--dangerously-skip-permissions" not in argv
    assert "--mcp-config" in argv
    assert player.research_shell is True     # so Baton's prompt names `baton report`
    planner = player.launch(ctx(tmp_path, mode="research", planning=True)).argv
    assert planner[planner.index("--tools") + 1] == "Read,Grep,Glob"   # the person's checkout
    assert planner[planner.index("--allowedTools") + 1] == "mcp__baton__baton_report"


def test_claude_resume_command(tmp_path):
    player = ClaudeCodePlayer("claude")
    assert player.resume(ctx(tmp_path)) is None                  # no session: start afresh
    launch = player.resume(ctx(tmp_path, session_id="abc-123", resume_message="Go on."))
    argv = launch.argv
    assert argv[argv.index("--resume") + 1] == "abc-123"
    assert "--session-id" not in argv
    assert argv[-2] == "--" and argv[-1].startswith("Go on.")


def test_claude_huge_prompt_goes_on_stdin(tmp_path):
    launch = ClaudeCodePlayer("claude").launch(ctx(tmp_path, prompt="x" * 200_000))
    assert launch.stdin_prompt is True and "x" * 1000 not in " ".join(launch.argv)


def test_claude_catalog_and_detection(tmp_path, monkeypatch):
    player = ClaudeCodePlayer()
    assert player.model_problem("opus") is None
    assert player.model_problem("claude-sonnet-4-5") is None
    assert "cannot start model" in player.model_problem("gpt-5")
    gateway = ClaudeCodePlayer(extra_models=["my-gateway-model"])
    assert gateway.model_problem("my-gateway-model") is None
    assert player.effort_problem("high") is None and player.effort_problem("turbo")
    for var in player.key_vars:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    (tmp_path / "fresh-home").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "fresh-home"))  # not conftest's signed-in person
    assert "not signed in" in player.signed_in()
    (Path(os.environ["HOME"]) / ".claude").mkdir()
    (Path(os.environ["HOME"]) / ".claude" / ".credentials.json").write_text("{}")
    assert player.signed_in() is None
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "elsewhere"))
    assert "not signed in" in player.signed_in()
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-x")
    assert player.signed_in() is None


# --------------------------------------------------------------------------- Codex

def test_codex_success_outcome_and_progress():
    player = CodexPlayer()
    out = player.outcome(CODEX_OK)
    assert out.session_id == "01a22a0d-91f4-7e01-b6d7-659845b7ec5b"
    # the model-metadata warning (an `error` item) is not fatal
    assert out.success_event is True and out.error is None
    assert out.tokens == 20306 + 8
    assert out.final_text == "All done."
    lines = [player.progress(line) for line in CODEX_OK.strip().splitlines()]
    assert lines[0] == "codex started"
    assert lines[3] == "$ /bin/bash -c 'printf hi > a.txt'"
    assert lines[5] == "All done."
    assert lines[6] == "turn done (20314 tokens)"
    assert player.progress(CODEX_MCP.strip()) == "baton_report done"


def test_codex_429_is_rate_limited():
    out = CodexPlayer().outcome(CODEX_429)
    assert out.success_event is False and out.rate_limited is True and out.limit_until is None
    assert out.error == "exceeded retry limit, last status: 429 Too Many Requests"


def test_codex_usage_limit_has_a_reset(utc):
    now = time.time()
    out = CodexPlayer().outcome(CODEX_LIMIT)
    assert out.session_id == "01a229fc-d6fa-71f3-a6f3-2d1d1763ab8a"
    assert out.limit_until is not None and not out.rate_limited
    assert now - 400 < out.limit_until < now + 25 * 3600
    assert time.strftime("%H:%M", time.localtime(out.limit_until - 60)) == "01:06"


def test_codex_reconnect_errors_before_a_completed_turn_are_not_a_failure():
    reconnect = '{"type":"error","message":"Reconnecting... 1/5"}'
    log = CODEX_OK.replace('{"type":"turn.started"}', '{"type":"turn.started"}\n' + reconnect)
    out = CodexPlayer().outcome(log)
    assert out.success_event is True and out.error is None


@pytest.mark.parametrize("text, now, expected", [
    ("or try again at 1:06 AM.", "2026-11-30 01:05", "2026-11-30 01:07"),
    ("or try again at 1:06 AM.", "2026-11-30 01:06", "2026-11-30 01:07"),
    ("or try again at 12:30 PM.", "2026-11-30 13:00", "2026-12-01 12:31"),
    ("or try again at Nov 30th, 2026 12:56 AM.", "2026-11-28 09:00", "2026-11-30 00:57"),
    ("or try again at Dec 1st, 2026 3:05 PM.", "2026-11-28 09:00", "2026-12-01 15:06"),
])
def test_codex_reset_wording(utc, text, now, expected):
    def epoch(s: str) -> float:
        return time.mktime(time.strptime(s, "%Y-%m-%d %H:%M"))

    assert codex_reset(text, epoch(now)) == epoch(expected)


def test_codex_build_command(tmp_path):
    argv = CodexPlayer("/opt/codex").launch(ctx(tmp_path, model="gpt-5.5", effort="low")).argv
    assert argv[:2] == ["/opt/codex", "exec"]
    assert argv[-2:] == ["--", "# Task 3: x\n\nDo it."]
    assert "--dangerously-bypass-approvals-and-sandbox" in argv and "--json" in argv
    configs = [argv[i + 1] for i, a in enumerate(argv) if a == "-c"]
    assert f"mcp_servers.baton.command={json.dumps(sys.executable)}" in configs
    assert 'mcp_servers.baton.args=["-P", "-m", "baton_tui", "mcp"]' in configs
    assert ('mcp_servers.baton.env_vars=["BATON_ATTEMPT", "BATON_NONCE", "BATON_STATE", '
            '"BATON_TASK"]') in configs
    assert 'mcp_servers.baton.default_tools_approval_mode="approve"' in configs
    assert "mcp_servers.baton.required=true" in configs
    assert "allow_login_shell=false" in configs
    assert 'model_reasoning_effort="low"' in configs
    assert argv[argv.index("-m") + 1] == "gpt-5.5"
    assert not list((tmp_path / "attempt").iterdir())          # nothing written for Codex


def test_codex_research_and_resume_commands(tmp_path):
    player = CodexPlayer("codex")
    research = player.launch(ctx(tmp_path, mode="research")).argv
    assert "--dangerously-bypass-approvals-and-sandbox" not in research
    assert 'sandbox_mode="read-only"' in research
    assert research[-1].endswith("Do it.")
    assert player.research_shell is False  # so Baton's prompt names the MCP report tool
    assert player.resume(ctx(tmp_path)) is None
    resumed = player.resume(ctx(tmp_path, session_id="th-1", resume_message="Go on.")).argv
    assert resumed[resumed.index("resume"):][:3] == ["resume", "--", "th-1"]
    assert resumed[-1].startswith("Go on.")
    assert resumed.index("--dangerously-bypass-approvals-and-sandbox") < resumed.index("resume")
    assert player.launch(ctx(tmp_path, prompt="y" * 200_000)).argv[-1] == "-"


def test_codex_catalog_and_detection(tmp_path, monkeypatch):
    player = CodexPlayer()
    # OpenAI's provider: Codex's catalog (here its bundled list: the codex on PATH is a stub)
    # and OpenAI's model families; anything else is refused.
    assert "cannot start model 'anything-my-provider-serves'" in player.model_problem(
        "anything-my-provider-serves")
    assert player.model_problem("gpt-6.2-sol") is None and player.model_problem("o3") is None
    assert CodexPlayer(extra_models=["mine-1"]).model_problem("mine-1") is None
    assert player.effort_problem("medium") is None
    for var in player.key_vars:
        monkeypatch.delenv(var, raising=False)
    home = tmp_path / "codex-home"
    home.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(home))
    assert "codex login" in player.signed_in()
    (home / "config.toml").write_text('model_provider = "mine"\n[model_providers.mine]\n'
                                      'base_url = "http://127.0.0.1:1/v1"\nenv_key = "MINE_KEY"\n')
    assert "MINE_KEY" in player.signed_in()
    monkeypatch.setenv("MINE_KEY", "k")
    assert player.signed_in() is None
    # A provider of the person's own serves its own names: Baton cannot judge them.
    assert player.model_problem("anything-my-provider-serves") is None
    monkeypatch.delenv("MINE_KEY")
    (home / "auth.json").write_text("{}")
    assert player.signed_in() is None


def test_research_prompt_names_the_report_tool_when_research_has_no_shell():
    from baton_tui.plan.model import Task
    from baton_tui.run.prompt import rules

    research = Task(id=1, title="survey", player="codex", mode="research")
    assert "baton_report` tool" in rules(research, can_shell=False)
    assert "`baton report done" not in rules(research, can_shell=False)
    assert "`baton report done" in rules(research, can_shell=True)


# -- a wait the output names counts from when it was printed ------------------------------------

def test_a_wait_an_agent_printed_counts_from_when_it_was_printed_not_when_read():
    from baton_tui.players.aider import AiderPlayer
    from baton_tui.players.base import reading_output
    from baton_tui.players.limits import reset_in

    log = ("litellm.RateLimitError: RateLimitError: OpenAIException - rate limited. "
           "Please try again in 20s.\n")
    printed = time.time() - 15  # the agent took its grace period to stop, and more
    with reading_output(printed):
        aider = AiderPlayer().outcome(log).limit_until
        worded = reset_in("usage limit reached: please try again in 20s")
    assert aider == pytest.approx(printed + 20) and worded == pytest.approx(printed + 20)
    unread = AiderPlayer().outcome(log).limit_until  # no log time known: from now
    assert unread is not None and unread >= time.time() + 19
    with reading_output(time.time() + 60):  # a clock ahead of ours: never later than now
        assert AiderPlayer().outcome(log).limit_until <= time.time() + 20.5


def test_aider_research_runs_the_commands_its_reply_proposes_in_rounds(tmp_path):
    from baton_tui.players.aider import AiderPlayer
    from baton_tui.players.aider_research import last_reply, proposed

    player = AiderPlayer("aider")
    research = player.launch(ctx(tmp_path, mode="research")).argv
    assert research[research.index("-m") + 1] == "baton_tui.players.aider_research"
    aider = research[research.index("--") + 1:]
    assert aider[0] == "aider" and "--dry-run" in aider and "ask" in aider
    message = Path(aider[aider.index("--message-file") + 1]).read_text()
    assert message.startswith("# Task 3: x") and "```bash block" in message
    planner = player.launch(ctx(tmp_path, mode="research", planning=True)).argv
    assert planner[0] == "aider" and "baton_tui.players.aider_research" not in planner
    assert player.launch(ctx(tmp_path)).argv[0] == "aider"            # build: Aider alone
    history = ("#### # Task 3\n#### Run the tests\n\nLet me run them.\n```bash\n$ pytest -q\n"
               "ruff check .\n```\n> Tokens: 1k sent\n")
    assert proposed(last_reply(history)) == ["pytest -q", "ruff check ."]
    assert proposed("```bash\npytest\n```\nBATON: done fine") == []    # it reported
    assert proposed(last_reply("#### ```bash\nrm -rf /\n```\n\nNothing to run.")) == []
