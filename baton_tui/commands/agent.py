"""Commands agents and Baton's own processes run: report, checkpoint, attempt, conductor, mcp."""

from __future__ import annotations

from argparse import Namespace

from baton_tui import api


def cmd_report(args: Namespace) -> int:
    message = args.summary if args.status == "done" else args.reason
    print(api.report(args.status, message or args.message))
    return 0


def cmd_checkpoint(args: Namespace) -> int:
    code, message = api.checkpoint(args.what, args.evidence)
    print(message)
    return code


def cmd_attempt(args: Namespace) -> int:
    return api.run_attempt(args.attempt_id, args.state)


def cmd_conductor(args: Namespace) -> int:
    return api.conduct(args.root)


def cmd_mcp(args: Namespace) -> int:
    api.serve_mcp()
    return 0
