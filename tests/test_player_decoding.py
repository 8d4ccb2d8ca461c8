"""One decoder per player: its typed events, and the progress lines, outcomes, halts and
steps the base player folds from them; capabilities as flags, not player names."""

from __future__ import annotations

import json

import pytest

from test_player_parsing import CLAUDE_OK, subscriber_limit
from test_player_parsing_js import OPENCODE_STREAM_ERROR

from baton_tui.config import Config
from baton_tui.players.amp import AmpPlayer
from baton_tui.players.base import Player, reading_output
from baton_tui.players.builtin import BUILTIN_CLASSES, player_named
from baton_tui.players.claude_code import ClaudeCodePlayer
from baton_tui.players.codex import CodexPlayer
from baton_tui.players.custom import CustomPlayer, ScriptPlayer
from baton_tui.players.decoding import (
    AgentStarted,
    Finished,
    GenericDecoder,
    LimitHit,
    Retrying,
    Said,
    SessionNamed,
    ToolCall,
    Usage,
)
from baton_tui.players.goose import GoosePlayer
from baton_tui.players.outcome import outcome_of
from baton_tui.players.registry import Catalog


def test_every_builtin_player_reads_its_output_with_a_decoder_of_its_own():
    for name, cls in BUILTIN_CLASSES.items():
        player = cls()
        assert player.parses_output, name
        assert type(player.decoder()) is not GenericDecoder, name
        assert type(player.decoder()) is type(player_named(name).decoder())
    for other in (Player(), ScriptPlayer(), CustomPlayer("mine", ["true"], None)):
        assert not other.parses_output and type(other.decoder()) is GenericDecoder
    assert type(player_named("mine").decoder()) is GenericDecoder   # unknown: read generically


def test_claude_events_in_order():
    events = ClaudeCodePlayer().decoder().read(CLAUDE_OK)
    kinds = [type(e) for e in events]
    assert kinds[:2] == [SessionNamed, AgentStarted]
    assert kinds.count(SessionNamed) == 1                  # named once, though on every line
    assert [e.text for e in events if isinstance(e, Said)] == ["Writing", "All done."]
    assert any(isinstance(e, ToolCall) and e.name == "Write" for e in events)
    assert events[-1] == Finished(True, "All done.", summary="2 turns")
    assert any(isinstance(e, Usage) and e.total for e in events)


def test_a_finished_run_drops_earlier_errors_and_limits():
    out = outcome_of([LimitHit(None, False, "429"), Finished(True, "ok")])
    assert out.success_event and out.error is None and not out.rate_limited
    assert out.final_text == "ok"


def test_the_last_known_reset_wins_and_a_usage_limit_outranks_a_throttle():
    assert outcome_of([LimitHit(5.0, True), LimitHit(None, False),
                       LimitHit(9.0, False)]).limit_until == 9.0
    both = outcome_of([LimitHit(None, False, "429"), LimitHit(None, True, "quota")])
    assert both.limited and not both.rate_limited and both.error == "quota"
    assert outcome_of([LimitHit(None, False, "429")]).rate_limited


@pytest.mark.parametrize("player, log", [
    (ClaudeCodePlayer(), subscriber_limit("s3", "You've hit your session limit", None)),
    (CodexPlayer(), json.dumps({"type": "turn.failed", "error": {
        "message": "You’ve hit your usage limit. Upgrade to Pro."}})),
    (AmpPlayer(), json.dumps({"type": "result", "subtype": "error", "is_error": True,
                              "error": "Out of credits: usage limit reached"})),
    (GoosePlayer(), json.dumps({"type": "error", "error": "insufficient_quota"})),
])
def test_a_usage_limit_without_a_reset_reads_the_same_for_every_player(player, log):
    """Reset unknown: limited (Baton pauses and probes), never a plain failure nor a throttle."""
    out = player.outcome(log)
    assert out.success_event is False
    assert out.limited and out.limit_until is None and not out.rate_limited
    assert out.error


def test_halts_come_from_the_players_that_retry_limits_on_their_own():
    retrying = {name for name, cls in BUILTIN_CLASSES.items() if cls.retries_limits_itself}
    assert retrying == {"opencode", "gemini", "aider"}
    opencode, gemini, aider = (player_named(n) for n in ("opencode", "gemini", "aider"))
    assert opencode.halt(OPENCODE_STREAM_ERROR) == \
        "rate limited: OpenCode would retry on its own, silently"
    assert gemini.halt("Attempt 1 failed with status 429. Retrying with backoff...") == \
        "rate limited: Gemini CLI would retry on its own"
    assert aider.halt("litellm.RateLimitError: rate limited") == \
        "rate limited: Aider would retry on its own for minutes"
    assert any(isinstance(e, Retrying) for e in aider.decoder().feed("litellm.RateLimitError"))
    assert ClaudeCodePlayer().halt("Attempt 1 failed with status 429. Retrying") is None
    assert gemini.halt("Applied edit to a.py") is None


def test_aider_waits_for_the_providers_reset_not_its_own_backoff():
    log = ("litellm.RateLimitError: RateLimitError: rate limited. Please try again in 20s.\n"
           "Retrying in 0.2 seconds...\n")
    with reading_output(1000.0):
        assert player_named("aider").outcome(log).limit_until == pytest.approx(1020.0)


def test_capabilities_are_flags_and_the_catalog_answers_them_by_name():
    script = ScriptPlayer()
    assert not script.runs_agent and script.check_is_task
    assert all(cls().runs_agent and not cls().check_is_task for cls in BUILTIN_CLASSES.values())
    catalog = Catalog.from_config(Config())
    assert not catalog.runs_agent("script") and catalog.check_is_task("script")
    assert catalog.runs_agent("codex") and not catalog.check_is_task("codex")
    assert catalog.runs_agent("nobody") and not catalog.check_is_task("nobody")
