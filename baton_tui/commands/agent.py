"""Commands agents and Baton's own processes run: report, checkpoint, attempt, conductor, mcp."""

from __future__ import annotations

from argparse import Namespace


def cmd_report(args: Namespace) -> int:
    from baton_tui.run.channel import caller_from_env, report

    caller = caller_from_env()
    message = args.summary if args.status == "done" else args.reason
    message = message or args.message
    print(report(caller, args.status, message))
    return 0


def cmd_checkpoint(args: Namespace) -> int:
    from baton_tui.run.channel import caller_from_env, checkpoint

    caller = caller_from_env()
    code, message = checkpoint(caller, args.what, args.evidence)
    print(message)
    return code


def cmd_attempt(args: Namespace) -> int:
    from baton_tui.run.attempt import run_attempt

    return run_attempt(args.attempt_id, args.state)


def cmd_conductor(args: Namespace) -> int:
    from baton_tui.run.conductor import conduct

    return conduct(args.root)


def cmd_mcp(args: Namespace) -> int:
    from baton_tui.run.mcp_server import serve

    serve()
    return 0


