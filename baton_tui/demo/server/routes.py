"""Which protocol a request speaks, and whether it takes a turn: the server's one dispatcher.

Detection is by path (``/v1/messages``, ``/chat/completions``, ``/responses``, Gemini's
``models/{model}:{method}``). Side requests never consume a turn: GET/HEAD probes and model
lists, Anthropic token counting, OpenCode's title request, Gemini's countTokens and JSON mode.
Every decision is written into the request's log `record`.
"""

from __future__ import annotations

import json
import re
from typing import Protocol
from urllib.parse import urlsplit

from baton_tui.demo.script import Answer, is_title_request
from baton_tui.demo.server import anthropic, chat_completions, gemini, responses
from baton_tui.demo.server.wire import DEFAULT_MODEL, Response, json_response



class Turns(Protocol):
    """Where the answers come from (`scripted.ScriptedServer`, which builds on this module):
    the script's next turn for a request, and the text of side requests (titles)."""

    @property
    def side_text(self) -> str: ...

    def _take_turn(self, protocol: str, req: dict, record: dict) -> Answer: ...


_PATHS = {
    "/v1/messages": "anthropic",
    "/v1/chat/completions": "chat",
    "/chat/completions": "chat",
    "/v1/responses": "responses",
    "/responses": "responses",
}
# Each protocol's module has `encode(req, answer, in_tokens)` and `error(answer)`.
_PROTOCOLS = {"anthropic": anthropic, "chat": chat_completions, "responses": responses}


def dispatch(server: Turns, method: str, target: str, raw: bytes,
             record: dict) -> Response:
    parts = urlsplit(target)
    path = parts.path.rstrip("/") or "/"
    if method in ("GET", "HEAD"):
        record["side"] = "probe"
        return probe(path)
    if method != "POST":
        record["side"] = "unsupported"
        return json_response({"error": {"message": f"method {method} not supported"}}, 405)
    try:
        req = json.loads(raw.decode("utf-8") or "{}")
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        record["side"] = "bad-json"
        return json_response({"error": {"message": f"request body is not JSON: {exc}"}}, 400)
    record["json"] = req
    if not isinstance(req, dict):
        record["side"] = "bad-json"
        return json_response({"error": {"message": "request body is not a JSON object"}}, 400)
    record["stream"] = bool(req.get("stream"))
    in_tokens = len(raw) // 4

    if path == "/v1/messages/count_tokens":
        record["protocol"], record["side"] = "anthropic", "count_tokens"
        return json_response({"input_tokens": in_tokens})
    protocol = _PATHS.get(path)
    if protocol is not None:
        record["protocol"] = protocol
        if protocol == "chat" and is_title_request(req):
            record["side"] = "title"
            return chat_completions.encode(req, Answer(text=server.side_text), in_tokens)
        ans = server._take_turn(protocol, req, record)
        encoder = _PROTOCOLS[protocol]
        if ans.error:
            return encoder.error(ans)
        return encoder.encode(req, ans, in_tokens)

    m = gemini.PATH.match(path)
    if m is None:
        record["side"] = "unknown-path"
        return json_response({"error": {"message": f"not found: {path}"}}, 404)
    return gemini.serve(m, parts.query, req, in_tokens, record, server._take_turn)


def probe(path: str) -> Response:
    """GET/HEAD: the liveness probe and model lists; never a turn."""
    name = "Scripted model (not a model)"
    if path in ("/v1/models", "/models"):
        model = {
            "id": DEFAULT_MODEL,
            "object": "model",
            "type": "model",
            "created": 0,
            "created_at": "1970-01-01T00:00:00Z",
            "display_name": name,
            "owned_by": "baton-script",
        }
        return json_response(
            {
                "object": "list",
                "data": [model],
                "has_more": False,
                "first_id": DEFAULT_MODEL,
                "last_id": DEFAULT_MODEL,
            }
        )
    if re.fullmatch(r"/(?:v1|v1beta|v1alpha)/models", path):
        model = {
            "name": f"models/{DEFAULT_MODEL}",
            "displayName": name,
            "supportedGenerationMethods": ["generateContent", "streamGenerateContent"],
        }
        return json_response({"models": [model]})
    if path == "/":
        text = b"Baton scripted model server: replays a script, not a model.\n"
        return Response(200, text, "text/plain; charset=utf-8")
    return json_response({"error": {"message": f"not found: {path}"}}, 404)
