"""`baton serve`: the app-server, or its generated schema and TypeScript declarations."""

from __future__ import annotations

import sys
from argparse import Namespace

from baton_tui.core.errors import BatonError


def cmd_serve(args: Namespace) -> int:
    if args.allow_remote and not args.listen:
        raise BatonError("--allow-remote goes with --listen ws://HOST:PORT")
    if args.schema or args.typescript:
        from baton_tui.serve import generate  # lazy: pydantic's schema machinery

        sys.stdout.write(generate.schema_text() if args.schema else generate.typescript())
        return 0
    from baton_tui.serve.main import serve  # lazy: asyncio, pydantic, the hub

    return serve(socket=args.socket, listen=args.listen, allow_remote=args.allow_remote)
