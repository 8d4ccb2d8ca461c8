"""``python -m baton_tui.demo.server``: serve a script file from a separate process.

For callers that cannot host the server in-process: the port is the first line on stdout
(and optionally written to ``--port-file``); it serves until SIGTERM or SIGINT. argparse and
signal are imported only here, so importing the server stays light.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from baton_tui.demo.script import load_script
from baton_tui.demo.server.scripted import ScriptedServer

if TYPE_CHECKING:
    import argparse


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m baton_tui.demo.server",
        description="Baton's scripted model server (replays a script; not a model).",
    )
    parser.add_argument("--script", required=True, type=Path, help="JSON script of turns")
    parser.add_argument("--log", type=Path, help="append every request as JSON lines here")
    parser.add_argument("--port-file", type=Path, help="write the port number here")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any)")
    parser.add_argument("--side-text", default=None, help="text for side requests")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Serve a script file until SIGTERM/SIGINT; the port is the first line on stdout."""
    args = build_parser().parse_args(argv)
    turns, side_text = load_script(args.script)
    server = ScriptedServer(
        turns,
        log_path=args.log,
        side_text=args.side_text or side_text or "Baton task",
        port=args.port,
    )
    stop = threading.Event()

    def _on_signal(signum: int, frame: Any) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    server.start()
    try:
        if args.port_file is not None:
            tmp = args.port_file.with_name(args.port_file.name + ".tmp")
            tmp.write_text(f"{server.port}\n", encoding="utf-8")
            os.replace(tmp, args.port_file)
        sys.stdout.write(f"{server.port}\n")
        sys.stdout.flush()
        while not stop.wait(0.5):
            pass
    finally:
        server.stop()
    return 0
