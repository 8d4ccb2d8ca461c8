"""`baton web`: the editor's Baton view in a browser (`baton_tui/web/`)."""

from __future__ import annotations

import sys
from argparse import Namespace

from baton_tui.core.errors import BatonError


def cmd_web(args: Namespace) -> int:
    """Print the URL first, then serve the page and its protocol until interrupted (Ctrl-C,
    SIGTERM or SIGHUP)."""
    from baton_tui.web.server import run  # lazy: asyncio, websockets, the hub

    if not 0 <= args.port <= 65535:
        raise BatonError(f"--port {args.port} is not a port (1 to 65535, or 0 for a free one)")
    try:
        return run(args.port, sys.stdout)
    except OSError as err:
        raise BatonError(f"cannot serve on 127.0.0.1:{args.port}: {err.strerror or err}") from None
