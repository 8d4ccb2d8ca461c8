"""Baton's scripted model server: replays a script of turns over real model wire protocols.

This is **not a model**. It is a small stdlib-only HTTP server, bound to 127.0.0.1 only, that
answers model requests from a fixed script so that ``baton demo`` and the real-agent-CLI tests
can drive real coding agents offline. It never contacts any other host, and every answer it gives
is whatever the script says (or ``"script exhausted"`` once the script runs out).

Protocols (detected by request path in ``routes``; JSON and streaming forms; one module each):

* Anthropic Messages (``anthropic``) — ``POST /v1/messages`` (``?beta=true`` too); SSE when
  ``"stream": true``. ``POST /v1/messages/count_tokens`` is answered as a side request.
* OpenAI Chat Completions (``chat_completions``) — ``POST /v1/chat/completions`` or
  ``/chat/completions``; SSE ``chat.completion.chunk`` when ``"stream": true`` (a usage chunk
  when ``stream_options.include_usage``), ending with ``data: [DONE]``.
* OpenAI Responses (``responses``) — ``POST /v1/responses`` or ``/responses``; SSE
  ``response.*`` events when ``"stream": true``, else one ``response`` object.
* Gemini (``gemini``) — ``POST /v1beta/models/{model}:generateContent`` and
  ``:streamGenerateContent`` (``?alt=sse`` for SSE, otherwise a JSON array of chunks);
  ``:countTokens`` is a side request. ``/v1/`` and ``/v1alpha/`` prefixes work the same.

Script turns (a JSON list; consumed in order, one per model request, across all protocols; full
rules and the side requests that never consume a turn are in :mod:`baton_tui.demo.script`)::

    {"text": "..."}                                          plain answer, end of turn
    {"text": "...", "tool": "Write", "input": {...}}         text then one tool call
    {"tool": "baton_report", "namespace": "mcp__baton", "input": {...}}   Responses namespace
    {"tools": [{"tool": "Read", "input": {...}}, ...]}       several tool calls
    {"error": 429, "body": {...}, "headers": {"retry-after": "60"}}      an HTTP error
    {"match": "substring", ...}    only for a request whose last user/tool content contains it

After the last turn every request is answered "script exhausted" with a normal end of turn.

Every request is recorded in ``ScriptedServer.requests`` (and appended as JSON lines to
``log_path``): time, method, path, a subset of headers (secrets redacted), the JSON body, the
protocol detected, whether it streamed, the turn index served (``None`` for side requests), the
side-request kind and the HTTP status.

The rest: ``wire`` (what the encoders share), ``httpd`` (the HTTP layer), ``scripted``
(``ScriptedServer``) and ``cli``::

    python -m baton_tui.demo.server --script FILE.json [--log FILE] [--port-file FILE] [--port N]

prints the port on its first stdout line (and writes it to ``--port-file``) and serves until
SIGTERM or SIGINT.
"""

from baton_tui.demo.script import load_script
from baton_tui.demo.server.cli import build_parser, main
from baton_tui.demo.server.scripted import HOST, ScriptedServer
from baton_tui.demo.server.wire import DEFAULT_MODEL

__all__ = ["DEFAULT_MODEL", "HOST", "ScriptedServer", "build_parser", "load_script", "main"]
