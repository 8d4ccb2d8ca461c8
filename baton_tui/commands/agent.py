"""Commands agents and Baton's own processes run: report, checkpoint, attempt, conductor, mcp."""

from __future__ import annotations

import sys
from datetime import datetime

from baton_tui import api
from baton_tui.core.errors import BatonError
from baton_tui.core.words import ReportStatus

TYPE_CHECKING = False  # argparse stays unimported on `baton report`'s path (see cli._quick)
if TYPE_CHECKING:
    from argparse import Namespace


def cmd_report(args: Namespace) -> int:
    message = args.summary if args.status == ReportStatus.DONE else args.reason
    until = parse_time(args.until) if args.until else None
    if args.until and args.status != ReportStatus.LIMITED:
        raise BatonError("--until goes with `baton report limited`")
    print(api.report(args.status, message or args.message, until=until, tokens=args.tokens,
                     cost=args.cost))
    return 0


def parse_time(text: str) -> float:
    """Epoch seconds, or an ISO 8601 time (a naive one is local time)."""
    try:
        return float(text)
    except ValueError:
        pass
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise BatonError(f"--until {text!r}: give epoch seconds or an ISO 8601 time "
                         "(2026-11-30T14:05)") from None


def cmd_checkpoint(args: Namespace) -> int:
    evidence = None
    if args.evidence == "-":
        evidence = sys.stdin.read()
    elif args.evidence:
        try:
            with open(args.evidence, encoding="utf-8", errors="replace") as fh:
                evidence = fh.read()
        except OSError as exc:
            raise BatonError(f"--evidence {args.evidence}: cannot read: {exc.strerror}") from None
    code, message = api.checkpoint(args.what, evidence, getattr(args, "wait", None))
    print(message)
    return code


def cmd_inbox(args: Namespace) -> int:
    print(api.inbox())
    return 0


def cmd_attempt(args: Namespace) -> int:
    return api.run_attempt(args.attempt_id, args.state)


def cmd_conductor(args: Namespace) -> int:
    if not (args.root or args.on_cue):
        raise BatonError("conductor: give --root (or --on-cue, and the root once cued)")
    return api.conduct(args.root, args.on_cue)


def cmd_mcp(args: Namespace) -> int:
    if getattr(args, "front", False):
        from baton_tui.mcp_front import serve  # lazy: agents' `baton mcp` never needs it

        serve()
        return 0
    api.serve_mcp()
    return 0


def cmd_acp(args: Namespace) -> int:
    from baton_tui.acp.agent import serve  # lazy: the ACP SDK, only for an editor's session

    serve()
    return 0
