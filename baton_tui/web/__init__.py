"""`baton web`: the editor's web client in a browser, on 127.0.0.1.

One web client, two hosts: the VS Code extension shows it in a webview and relays its
JSON-RPC to `baton serve --stdio`; here the protocol's own WebSocket transport serves it on
127.0.0.1 (same token, the page's origin only) and, on the same port, gives the page — only
with the token of the URL it printed. The page's script and style
(`static/`) are built from `editors/vscode/web/` by `editors/vscode/esbuild.mjs` and kept in
the tree, so nothing is fetched or built at run time.

`server` holds both.
"""
