"""`baton serve`: Baton's app-server — one typed JSON-RPC 2.0 protocol for every front end.

A front end like the TUI and the CLI: it reaches the engine only through the façade
(`baton_tui.api`, through its `Session` handle). One JSON object per line over stdio, a Unix
socket or a WebSocket on loopback. The wire shapes are pydantic models (`wire.py`); the JSON
Schema and the TypeScript declarations in `schema/` are generated from them (`generate.py`),
never written by hand.

Modules: `wire` (the shapes and the method table), `generate` (schema and TypeScript),
`methods` (each request's handler on the session), `hub` (connections, the event pump, task
output, back-pressure), `connection` (framing and dispatch of one client), `transports`
(stdio, Unix socket, WebSocket).
"""
