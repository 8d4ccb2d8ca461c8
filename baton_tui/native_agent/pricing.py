"""What a model turn cost, in USD, from its token usage (reported in every `usage` event).

Kept apart so the price table can be updated without reading the loop or the providers.
"""

from __future__ import annotations

import re

from baton_tui.native_agent.wire import Usage

# USD per million tokens: (input, output). Unknown models cost 0. Cache reads are charged at
# a tenth of the input price, cache writes at 1.25 times (Anthropic's published multipliers).
PRICES: dict[str, tuple[float, float]] = {
    "claude-opus-4-8": (5.0, 25.0),
    "claude-opus-4-7": (5.0, 25.0),
    "claude-opus-4-6": (5.0, 25.0),
    "claude-opus-4-5": (5.0, 25.0),
    "claude-opus-4-1": (15.0, 75.0),
    "claude-opus-4": (15.0, 75.0),
    "claude-sonnet-4-6": (3.0, 15.0),
    "claude-sonnet-4-5": (3.0, 15.0),
    "claude-sonnet-4": (3.0, 15.0),
    "claude-haiku-4-5": (1.0, 5.0),
    "gpt-5": (1.25, 10.0),
    "gpt-5.1": (1.25, 10.0),
    "gpt-5-mini": (0.25, 2.0),
    "gpt-5-nano": (0.05, 0.4),
    "gpt-4.1": (2.0, 8.0),
    "gpt-4.1-mini": (0.4, 1.6),
    "gpt-4o": (2.5, 10.0),
    "gpt-4o-mini": (0.15, 0.6),
}
_DATED = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2})$")


def price_of(model: str) -> tuple[float, float]:
    return PRICES.get(model) or PRICES.get(_DATED.sub("", model)) or (0.0, 0.0)


def cost_of(model: str, usage: Usage) -> float:
    inp, out = price_of(model)
    return (usage.input_tokens * inp + usage.output_tokens * out
            + usage.cache_read_tokens * inp * 0.1
            + usage.cache_write_tokens * inp * 1.25) / 1_000_000
