"""`baton web`: the editor's Baton view in a browser (`baton_tui/web/`)."""

from __future__ import annotations

import signal
import sys
from argparse import Namespace
from pathlib import Path

from baton_tui.core.errors import BatonError


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def cmd_web(args: Namespace) -> int:
    """Print the URL first, then serve the page and its protocol until interrupted (Ctrl-C or
    SIGTERM: the `baton serve` processes of open pages end with it)."""
    from baton_tui.web.server import run  # lazy: the server's modules, for this command only

    if not 0 <= args.port <= 65535:
        raise BatonError(f"--port {args.port} is not a port (1 to 65535, or 0 for a free one)")
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        code = run(args.port, Path.cwd(), sys.stdout)
    except OSError as err:
        raise BatonError(f"cannot serve on 127.0.0.1:{args.port}: {err.strerror or err}") from None
    return 0 if code == 130 else code
