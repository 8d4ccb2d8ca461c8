"""`baton web`: the editor's web client in a browser, on 127.0.0.1.

One web client, two hosts: the VS Code extension shows it in a webview and relays its
JSON-RPC to `baton serve --stdio`; here a small HTTP server gives the page (only with the
token of the URL it printed) and relays the page's WebSocket (`/rpc`, same token, same origin
only) to a `baton serve --stdio` of its own, one per connection. The page's script and style
(`static/`) are built from `editors/vscode/web/` by `editors/vscode/esbuild.mjs` and kept in
the tree, so nothing is fetched or built at run time.

Modules: `websocket` (RFC 6455 framing, the server side), `server` (the page and the relay).
"""
