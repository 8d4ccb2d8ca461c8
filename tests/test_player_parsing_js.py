"""OpenCode and Gemini CLI adapters: event parsing on recorded lines, command lines, detection.

The recorded lines are real output of OpenCode 1.18.33 and Gemini CLI 0.61.0 (stdout events and
the stderr lines Baton reads) run against Baton's scripted model server, shortened where a field
was long. The end-to-end behaviour is in tests/test_real_players.py; these pin the parsing.
"""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import pytest

from baton_tui.players.base import AttemptContext
from baton_tui.players.gemini import GeminiPlayer
from baton_tui.players.gemini_home import build_home, loads_jsonc
from baton_tui.players.opencode import OpenCodePlayer
from baton_tui.players.limits import pacific_midnight, retry_after, wait_seconds

SID = "ses_dd320cd09ffeP9vIygkAS5LDgM"
OPENCODE_OK = "\n".join([
    '{"type":"step_start","timestamp":1796048585637,"sessionID":"%s","part":{"type":"step-start"}}',
    '{"type":"text","timestamp":1796048585637,"sessionID":"%s","part":{"type":"text","text":"Writing"}}',
    '{"type":"tool_use","timestamp":1796048585722,"sessionID":"%s","part":{"type":"tool","tool":"write","state":{"status":"completed","input":{"filePath":"/r/hello.txt","content":"hi\\n"},"output":"Wrote file successfully."}}}',  # noqa: E501
    '{"type":"step_finish","timestamp":1796048586167,"sessionID":"%s","part":{"reason":"tool-calls","tokens":{"total":8331,"input":8315,"output":16,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0.002}}',
    '{"type":"text","timestamp":1796048587625,"sessionID":"%s","part":{"type":"text","text":"done"}}',
    '{"type":"step_finish","timestamp":1796048587899,"sessionID":"%s","part":{"reason":"stop","tokens":{"total":8503,"input":8502,"output":1},"cost":0.001}}',
]).replace("%s", SID)
OPENCODE_STREAM_ERROR = (
    'timestamp=2026-11-30T14:32:40.564Z level=ERROR run=4a414f8b message="stream error" '
    f'providerID=scripted modelID=scripted-model session.id={SID} small=false agent=build '
    'mode=primary error.error="AI_APICallError: Usage limit reached. Please try again in 3s."')
OPENCODE_429_EVENT = json.dumps({
    "type": "error", "timestamp": 1796048796851, "sessionID": SID, "error": {
        "name": "APIError", "data": {
            "message": "limit", "statusCode": 429, "isRetryable": True,
            "responseHeaders": {"retry-after": "120", "date": "Mon, 30 Nov 2026 14:26:36 GMT"},
            "responseBody": '{"type":"error","error":{"type":"GoUsageLimitError"}}'}}})

GSID = "6268c164-8e16-48b7-9fed-df22165fa7c5"
GEMINI_OK = "\n".join([
    '{"type":"init","timestamp":"2026-11-30T14:32:09.302Z","session_id":"%s","model":"gemini-2.5-pro"}',
    '{"type":"message","timestamp":"2026-11-30T14:32:09.303Z","role":"user","content":"go"}',
    '{"type":"tool_use","timestamp":"2026-11-30T14:32:09.400Z","tool_name":"run_shell_command","tool_id":"t0","parameters":{"command":"echo first","description":"x"}}',  # noqa: E501
    '{"type":"tool_result","timestamp":"2026-11-30T14:32:09.721Z","tool_id":"t0","status":"success","output":"first"}',
    'Attempt 1 failed: You have exhausted your capacity on this model. Your quota will reset after 3s.. Retrying after 4022ms...',  # noqa: E501
    '{"type":"message","timestamp":"2026-11-30T14:32:13.793Z","role":"assistant","content":"af","delta":true}',
    '{"type":"message","timestamp":"2026-11-30T14:32:13.793Z","role":"assistant","content":"ter","delta":true}',
    '{"type":"result","timestamp":"2026-11-30T14:32:13.794Z","status":"success","stats":{"total_tokens":24488,"input_tokens":24477,"output_tokens":11}}',
]).replace("%s", GSID)
GEMINI_DAILY = ('{"type":"result","timestamp":"2026-11-30T14:32:13.794Z","status":"error","error":'
                '{"type":"unknown","message":"[API Error: You have exhausted your daily quota on '
                'this model.]\\nPlease wait and try again later."},"stats":{"total_tokens":0}}')


def ctx(tmp_path: Path, mode: str = "build", **extra) -> AttemptContext:
    attempt = tmp_path / "attempt"
    attempt.mkdir(exist_ok=True)
    prompt = attempt / "prompt.md"
    prompt.write_text("Create hello.txt.")
    env = {"BATON_TASK": "1", "BATON_ATTEMPT": "7", "BATON_NONCE": "bnc_x", "BATON_STATE": "/s"}
    return AttemptContext(task_id=1, mode=mode, prompt_path=prompt, prompt="Create hello.txt.",
                          worktree=tmp_path / "wt", attempt_dir=attempt, env=env, **extra)


# --------------------------------------------------------------------------- OpenCode
def test_opencode_finished_run_reads_session_tokens_cost_and_text():
    out = OpenCodePlayer().outcome(OPENCODE_OK)
    assert (out.session_id, out.tokens, out.final_text) == (SID, 8331 + 8503, "done")
    assert out.cost == pytest.approx(0.003) and out.success_event is True
    assert not (out.rate_limited or out.limit_until or out.error)


def test_opencode_run_cut_short_is_not_a_success():
    """A signal makes OpenCode exit 0: without the final `stop` step it did not finish."""
    out = OpenCodePlayer().outcome("\n".join(OPENCODE_OK.splitlines()[:4]))
    assert out.success_event is None and out.session_id == SID


def test_opencode_stops_at_its_silent_retry_and_reads_the_reset():
    player = OpenCodePlayer()
    assert player.halt(OPENCODE_STREAM_ERROR)
    assert player.halt(OPENCODE_STREAM_ERROR.replace("Usage limit reached. Please try again "
                                                     "in 3s.", "Internal server error")) is None
    assert player.halt('{"type":"text","part":{"text":"rate limit ahead"}}') is None
    out = player.outcome(OPENCODE_STREAM_ERROR + "\n")   # killed before any JSON event
    assert out.session_id == SID                          # the log line names the session
    assert out.limit_until == pytest.approx(1796049160.564 + 3, abs=0.01)
    plain = OPENCODE_STREAM_ERROR.replace("Usage limit reached. Please try again in 3s.",
                                          "scripted error 429")
    assert player.outcome(plain).rate_limited and player.outcome(plain).limit_until is None
    assert player.progress(OPENCODE_STREAM_ERROR).startswith("model error: AI_APICallError")


def test_opencode_error_event_retry_after_is_the_reset():
    out = OpenCodePlayer().outcome(OPENCODE_429_EVENT)
    assert out.success_event is False and out.error == "limit"
    assert out.limit_until == pytest.approx(1796048796.851 + 120, abs=0.01)
    no_header = OPENCODE_429_EVENT.replace('"retry-after": "120", ', "")
    assert OpenCodePlayer().outcome(no_header).limited    # a usage limit, reset unknown
    assert OpenCodePlayer().outcome(no_header.replace("GoUsageLimitError", "x")).rate_limited


def test_opencode_progress_lines():
    lines = [OpenCodePlayer().progress(line) for line in OPENCODE_OK.splitlines()]
    assert lines == [None, "Writing", "write /r/hello.txt", None, "done",
                     "finished (8503 tokens)"]


def test_opencode_command_lines(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENCODE_CONFIG_CONTENT", '{"share": "disabled", "mcp": {"mine": {}}}')
    player = OpenCodePlayer()
    build = player.launch(ctx(tmp_path, model="anthropic/claude-sonnet-4-5", effort="high"))
    assert build.stdin_prompt and build.stdin_file is None       # the prompt file on stdin
    assert "Create hello.txt." not in build.argv                  # never on argv (quoted)
    assert build.argv[build.argv.index("--variant") + 1] == "high"
    assert build.env["PWD"] == str(tmp_path / "wt")
    config = json.loads(build.env["OPENCODE_CONFIG_CONTENT"])
    assert config["share"] == "disabled" and "mine" in config["mcp"]   # the person's kept
    assert config["mcp"]["baton"]["environment"]["BATON_NONCE"] == "bnc_x"
    assert "permission" not in config
    research = player.launch(ctx(tmp_path, mode="research"))
    config = json.loads(research.env["OPENCODE_CONFIG_CONTENT"])
    assert research.argv[research.argv.index("--agent") + 1] == "baton-research"
    rules = list(config["agent"]["baton-research"]["permission"].items())
    assert rules[0] == ("*", "deny") and ("read", "allow") in rules   # the last match wins
    assert ("baton_*", "allow") in rules and all(v == "allow" for _k, v in rules[1:])
    assert ("bash", "allow") in rules and not {"edit", "write"} & dict(rules).keys()
    planner = player.launch(ctx(tmp_path, mode="research", planning=True))
    config = json.loads(planner.env["OPENCODE_CONFIG_CONTENT"])
    assert "bash" not in config["agent"]["baton-research"]["permission"]   # denied by "*"
    resumed = player.resume(ctx(tmp_path, session_id=SID, resume_message="Go on."))
    assert resumed.argv[resumed.argv.index("--session") + 1] == SID
    assert resumed.stdin_file.read_text().startswith("Go on.")
    assert stat.S_IMODE(resumed.stdin_file.stat().st_mode) == 0o600


def test_opencode_signed_in_means_a_provider(tmp_path, monkeypatch):
    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "OPENCODE_CONFIG",
                "OPENCODE_CONFIG_CONTENT", "OPENROUTER_API_KEY", "GITHUB_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    player = OpenCodePlayer()
    assert "opencode auth login" in player.signed_in()
    auth = Path(os.environ["XDG_DATA_HOME"]) / "opencode" / "auth.json"
    auth.parent.mkdir(parents=True)
    auth.write_text('{"anthropic": {"type": "api", "key": "k"}}')
    assert player.signed_in() is None
    auth.write_text("{}")
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "opencode" / "opencode.jsonc"
    config.parent.mkdir(parents=True)
    config.write_text('{\n // mine\n "provider": {"local": {"options": {}}}}')
    assert player.signed_in() is None


def test_opencode_catalog_is_what_opencode_models_lists_and_is_cached(tmp_path, monkeypatch):
    calls = tmp_path / "calls"
    fake = tmp_path / "bin" / "opencode"
    fake.parent.mkdir()
    fake.write_text(f"#!/bin/sh\necho x >> {calls}\nprintf 'opencode/big-pickle\\n"
                    "anthropic/claude-sonnet-4-5\\n'\n")
    fake.chmod(0o755)
    player = OpenCodePlayer(bin_path=str(fake), extra_models=["local/mine"])
    assert player.model_problem("anthropic/claude-sonnet-4-5") is None
    assert player.model_problem("local/mine") is None
    assert "not in `opencode models`" in player.model_problem("nonsense-model")
    assert player.catalog()[:2] == ("opencode/big-pickle", "anthropic/claude-sonnet-4-5")
    assert calls.read_text().count("x") == 1                     # asked once, then cached
    monkeypatch.setenv("ANTHROPIC_API_KEY", "another")            # a new provider key: ask again
    player.catalog()
    assert calls.read_text().count("x") == 2


# --------------------------------------------------------------------------- Gemini CLI
def test_gemini_finished_run_and_its_text():
    out = GeminiPlayer().outcome(GEMINI_OK)
    assert (out.session_id, out.tokens, out.final_text, out.success_event) == \
        (GSID, 24488, "after", True)


def test_gemini_stops_at_its_own_retry_and_reads_the_delay():
    player = GeminiPlayer()
    retry = GEMINI_OK.splitlines()[4]
    assert player.halt(retry)
    assert player.halt("Attempt 2 failed with status 429. Retrying with backoff...")
    assert player.halt("Attempt 1 failed with status 503. Retrying with backoff...") is None
    assert player.halt("YOLO mode is enabled. All tool calls will be automatically approved.") \
        is None
    before = time.time()
    out = player.outcome("\n".join(GEMINI_OK.splitlines()[:5]))   # stopped right there
    assert out.session_id == GSID and out.success_event is None
    assert before + 3 <= out.limit_until <= time.time() + 3      # the quota's own delay
    plain = player.outcome("Attempt 1 failed with status 429. Retrying with backoff...")
    assert plain.rate_limited and plain.limit_until is None


def test_gemini_daily_quota_resets_at_midnight_pacific():
    out = GeminiPlayer().outcome(GEMINI_DAILY)
    assert out.success_event is False and "daily quota" in out.error
    assert out.limit_until == pytest.approx(pacific_midnight(), abs=5)


def test_gemini_command_lines_and_its_view_of_gemini_home(tmp_path, monkeypatch):
    person = Path(os.environ["HOME"]) / ".gemini"
    person.mkdir()
    mine = '{\n  // my settings\n  "ui": {"theme": "x"}, "mcpServers": {"mine": {"command": "m"}}}'
    (person / "settings.json").write_text(mine)
    (person / "oauth_creds.json").write_text("{}")
    player = GeminiPlayer()
    build = player.launch(ctx(tmp_path, effort="low", model="gemini-2.5-pro"))
    assert build.argv[build.argv.index("--approval-mode") + 1] == "yolo"
    assert build.argv[-2:] == ["--prompt", "Create hello.txt."]
    assert len(build.argv[build.argv.index("--session-id") + 1]) == 36
    view = Path(build.env["GEMINI_CLI_HOME"]) / ".gemini"
    assert (person / "settings.json").read_text() == mine             # never edited
    assert (view / "oauth_creds.json").resolve() == person / "oauth_creds.json"
    assert (view / "tmp").resolve() == person / "tmp"                 # sessions: the person's
    settings = json.loads((view / "settings.json").read_text())
    assert stat.S_IMODE((view / "settings.json").stat().st_mode) == 0o600
    assert settings["ui"] == {"theme": "x"} and "mine" in settings["mcpServers"]
    assert settings["mcpServers"]["baton"]["env"]["BATON_NONCE"] == "bnc_x"
    overrides = settings["modelConfigs"]["customOverrides"]
    assert {json.dumps(o["modelConfig"]) for o in overrides} >= {
        json.dumps({"generateContentConfig": {"thinkingConfig": {"thinkingBudget": 1024}}})}
    research = player.launch(ctx(tmp_path, mode="research"))
    assert research.argv[research.argv.index("--approval-mode") + 1] == "default"
    policy = Path(research.argv[research.argv.index("--admin-policy") + 1]).read_text()
    assert all(f'toolName = "{t}"\ndecision = "deny"' in policy for t in ("write_file", "replace"))
    assert 'toolName = "run_shell_command"\ndecision = "allow"' in policy
    planner = player.launch(ctx(tmp_path, mode="research", planning=True))
    policy = Path(planner.argv[planner.argv.index("--admin-policy") + 1]).read_text()
    assert 'toolName = "run_shell_command"\ndecision = "deny"' in policy
    assert research.argv[research.argv.index("--allowed-mcp-server-names") + 1] == "baton"
    resumed = player.resume(ctx(tmp_path, session_id=GSID))
    assert resumed.argv[resumed.argv.index("--resume") + 1] == GSID


def test_gemini_signed_in(monkeypatch):
    for var in GeminiPlayer.key_vars:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.delenv("GEMINI_CLI_HOME", raising=False)
    assert "GEMINI_API_KEY" in GeminiPlayer().signed_in()
    monkeypatch.setenv("GEMINI_API_KEY", "k")
    assert GeminiPlayer().signed_in() is None
    assert "cannot start model" in GeminiPlayer().model_problem("nonsense-model")
    assert GeminiPlayer().model_problem("flash") is None


# --------------------------------------------------------------------------- shared helpers
def test_wait_words_retry_after_and_jsonc():
    assert wait_seconds("Please try again in 1m30s.") == 90
    assert wait_seconds("Retrying after 4022ms...") == pytest.approx(4.022)
    assert wait_seconds("Your quota will reset after 3s.") == 3
    assert wait_seconds("rate limited") is None
    assert retry_after("30", 100.0) == 130.0
    assert retry_after("Mon, 30 Nov 2026 14:26:36 GMT", 0.0) == 1796048796.0
    assert retry_after("soon", 0.0) is None
    assert loads_jsonc('{"a": "http://x", /* b */ "c": 1 // d\n}') == {"a": "http://x", "c": 1}
    assert 0 < pacific_midnight(1796048796.0) - 1796048796.0 <= 86400


def test_gemini_home_is_rebuilt_per_attempt_without_touching_the_person(tmp_path):
    env = {"HOME": str(tmp_path / "home")}
    home = build_home(tmp_path / "a1", env, {"mcpServers": {"baton": {"command": "b"}}})
    assert (tmp_path / "home" / ".gemini" / "tmp").is_dir()      # made for the sessions
    assert not (tmp_path / "home" / ".gemini" / "settings.json").exists()
    assert json.loads((home / ".gemini" / "settings.json").read_text()) == \
        {"mcpServers": {"baton": {"command": "b"}}}


def test_readable_steps_of_both():
    from baton_tui.players.builtin import player_named

    def read(name: str, text: str) -> list[tuple[str, str]]:
        reader = player_named(name).step_reader()
        return [(s.kind, s.text) for line in text.splitlines() for s in reader.feed(line)]

    assert read("opencode", OPENCODE_OK) == [("said", "Writing"), ("file", "write /r/hello.txt"),
                                             ("said", "done"), ("result", "finished (8503 tokens)")]
    gemini = read("gemini", GEMINI_OK)
    assert ("command", "$ echo first") in gemini and ("said", "after") in gemini  # pieces joined
    assert gemini[-1] == ("result", "finished (24488 tokens)")
