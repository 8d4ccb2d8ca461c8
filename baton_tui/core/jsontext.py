"""JSON text that is always JSON: `NaN` and `Infinity` are not, and a reader in another
language (`jq`, a browser) rejects the whole document. A float that is not finite is written
as `null` (unknown), never as one of them (standard library only)."""

from __future__ import annotations

import json
import math

TYPE_CHECKING = False  # `typing` stays unimported on the status path
if TYPE_CHECKING:
    from typing import Any


def finite(value: Any) -> Any:
    """`value` with every float that is not finite, at any depth, made None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def dumps(value: Any, **options: Any) -> str:
    """`json.dumps` that never writes NaN or Infinity (see `finite`); as fast as it when
    there is none, which is always but for a damaged or hostile number."""
    try:
        return json.dumps(value, allow_nan=False, **options)
    except ValueError:
        return json.dumps(finite(value), allow_nan=False, **options)


def cleaned(text: str) -> Any:
    """The value of JSON text that `json.dumps` wrote, when it holds NaN or Infinity (then
    made None); None when it holds neither. A quick look for the words first: only text that
    has them (a title may say "NaN" too) is parsed."""
    if "NaN" not in text and "Infinity" not in text:
        return None
    found = []
    value = json.loads(text, parse_constant=lambda word: found.append(word))
    return value if found else None
