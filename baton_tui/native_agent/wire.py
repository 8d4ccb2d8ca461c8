"""What the native loop speaks: JSON-line events out, provider-neutral replies in.

The loop's only output is one JSON object per stdout line (read back by
`baton_tui.players.native`); every provider turns its SDK's answer into a `Reply` and its SDK's
errors into an `ApiFailure`, so the loop, the retry logic and the pricing never see an SDK type.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from typing import Any


def emit(kind: str, **data: Any) -> None:
    sys.stdout.write(json.dumps({"type": kind, **data}, ensure_ascii=False) + "\n")
    sys.stdout.flush()


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


@dataclass
class Call:
    id: str
    name: str
    args: Any
    bad_json: bool = False


@dataclass
class Reply:
    text: str
    calls: list[Call]
    usage: Usage
    message: dict[str, Any]
    stop: str | None = None


@dataclass
class ApiFailure(Exception):
    status: int | None
    message: str
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    transient: bool = False
