"""The models an OpenAI-compatible endpoint serves (`GET {base}/models`), cached briefly.

The `openai` route talks to whatever `OPENAI_BASE_URL` names — a local server, a gateway, a
proxy — and such an endpoint is the only authority on its own model names. Plan validation
asks it once and keeps the answer ten minutes in `$BATON_HOME/cache/` (keyed by the URL and a
hash of the key, never the key itself). An endpoint that cannot answer gives None: Baton then
cannot judge a name, and says nothing rather than refuse a model that may well be served.
Only the endpoint the person configured is asked; with no base URL nothing is fetched.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

from baton_tui.paths import baton_home

MAX_AGE = 600.0
TIMEOUT = 5.0


def _cache(base_url: str, key: str) -> Path:
    digest = hashlib.sha256(f"{base_url}\0{key}".encode()).hexdigest()[:16]
    return baton_home() / "cache" / f"endpoint-models-{digest}.json"


def served_models(base_url: str, key: str | None) -> tuple[str, ...] | None:
    """The model ids `base_url` lists, or None when it does not answer with a list."""
    cache = _cache(base_url, key or "")
    try:
        saved = json.loads(cache.read_text(encoding="utf-8"))
        if time.time() - float(saved["at"]) < MAX_AGE:
            return tuple(saved["models"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    import urllib.error  # lazy: urllib.request (~60 ms cold) only when an endpoint is asked
    import urllib.request  # lazy: as above; the conductor and `baton players` rarely ask

    request = urllib.request.Request(base_url.rstrip("/") + "/models",
                                     headers={"Authorization": f"Bearer {key or ''}",
                                              "Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            body = json.loads(response.read().decode("utf-8", "replace"))
    except (OSError, ValueError, urllib.error.URLError):
        return None
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list):
        return None
    models = tuple(str(m["id"]) for m in data if isinstance(m, dict) and m.get("id"))
    if not models:
        return None
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"at": time.time(), "models": models}), encoding="utf-8")
        os.replace(tmp, cache)
    except OSError:
        pass
    return models
