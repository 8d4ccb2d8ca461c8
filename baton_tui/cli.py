"""`baton` entry point: argparse only, every handler imported lazily.

`main(argv) -> int` is what tests call. `baton --help`, `baton status` and
`baton report` must stay fast: nothing heavy is imported before a handler runs.
"""

from __future__ import annotations

import os
import sys
from importlib import import_module
from types import SimpleNamespace

from baton_tui.core.words import (  # the standard library's enum only
    BUILTIN_PLAYERS, Autonomy, Mode, ReportStatus,
)

TYPE_CHECKING = False  # argparse is imported when a parser is built (see `_quick`)
if TYPE_CHECKING:
    import argparse
    import typing
    from pathlib import Path

EXAMPLES = """examples:
  baton plan --goal "add rate limiting to the API"   draft a plan (the planner may ask first)
  baton plan --from plan.json                        load a plan you wrote
  baton task-player 2 codex                          give task 2 to another player
  baton approve && baton run                         approve the whole plan, then run it
  baton status                                       from a second terminal, while it runs
  baton handoff review && baton handoff merge        read the combined diff, then merge it
  eval "$(baton completion bash)"                    complete commands, players and ids

"""

EXIT_CODES = """exit codes:
  0    plan complete (or the command did what it said)
  1    a task failed or never reported; handoff merge stopped (a conflict, a deleted branch)
  2    bad input, plan not approved, dirty tree or wrong branch
  3    waiting on you or on a usage-limit reset (state saved; `baton resume` continues)
  130  interrupted (state saved)
"""


MAX_TASK_ID = 999_999  # as plan.model.MAX_ID (not imported: it would load pydantic)


def task_id(text: str) -> int:
    """A task id argument: a whole number from 1 to MAX_TASK_ID (a huge one is a usage error,
    not an overflow deep in SQLite)."""
    if not (text.isascii() and text.isdigit()) or not 1 <= int(text[:12]) <= MAX_TASK_ID:
        import argparse  # lazy: `baton status` and `baton report` parse without argparse (`_quick`)

        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a task id (1 to {MAX_TASK_ID})")
    return int(text)


def _number(text: str, kind: type, least: float, what: str) -> float:
    """An option's number: a whole one (`kind=int`) or any finite one, at least `least` — a
    negative budget or NaN would switch a limit off without a word, and JSON has no NaN."""
    try:
        value = kind(text)
    except ValueError:
        value = None
    if value is None or value != value or value in (float("inf"), float("-inf")) \
            or value < least:
        import argparse  # lazy, and only for a refusal: an agent's `report --tokens N` parses without it

        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not {what}")
    return value


def count(text: str) -> int:
    """A number of tokens: a whole number, 0 or more."""
    return int(_number(text, int, 0, "a whole number of 0 or more"))


def at_least_one(text: str) -> int:
    """A number of failures: a whole number, 1 or more."""
    return int(_number(text, int, 1, "a whole number of 1 or more"))


def amount(text: str) -> float:
    """An amount of money: a finite number, 0 or more."""
    return _number(text, float, 0, "an amount of 0 or more (such as 2.50)")


def deadline(text: str) -> str:
    """A deadline as given (a clock time or a duration), refused before anything is
    recorded: `run --approve --deadline 25:99` must not approve the plan and then fail."""
    from baton_tui.api.running import deadline_problem  # lazy: pydantic, only with the option

    problem = deadline_problem(text)
    if problem is not None:
        import argparse  # lazy, and only for a refusal

        raise argparse.ArgumentTypeError(f"{text[:40]!r}: {problem}")
    return text


class _Complete:
    """A shell completer for one argument (argcomplete calls it): the work, and its imports,
    happen in `commands/completion.py` only when a shell asks."""

    def __init__(self, kind: str, *words: str):
        self.kind, self.words = kind, words

    def __call__(self, **context: object) -> list[str]:
        from baton_tui.commands import completion  # lazy: only a completing shell needs it

        return completion.candidates(self.kind, self.words, context.get("parsed_args"))


REPORT_STATUSES = tuple(s.value for s in ReportStatus)
_REPORT_OPTIONS: dict[str, typing.Callable[[str], object]] = {
    "--summary": str, "--reason": str, "--until": str, "--tokens": count, "--cost": amount}


class _Unused:
    """Stands in for a subcommand's parser that `build_parser(only=…)` leaves out: every
    method takes anything and does nothing (a real parser each costs argparse's formatter
    and translations, which made up a quarter of `baton status` at 100 tasks)."""

    def __getattr__(self, name: str) -> "_Unused":
        return self

    def __call__(self, *args: object, **kwargs: object) -> "_Unused":
        return self


_UNUSED = _Unused()


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole CLI contract of DESIGN.md.

    `only` builds just that subcommand (the rest would be built and thrown away): it keeps
    `baton status`, `baton report` and a run's start quick. `main` falls back to the full
    parser for help and for unknown commands.
    """
    import argparse  # lazy: `baton status` and `baton report` parse without argparse (`_quick`)

    class Parser(argparse.ArgumentParser):
        def parse_args(self, args: "typing.Sequence[str] | None" = None,  # type: ignore[override]
                       namespace: "argparse.Namespace | None" = None) -> "argparse.Namespace":
            """Arguments left over are the subcommand's to refuse: its own `--help` and the
            options it has that look like them (argparse names the top level's)."""
            parsed, extras = self.parse_known_args(args, namespace)
            if extras:
                owner = innermost(self, parsed)
                owner.error(unrecognized(extras, owner))
            return parsed

        def error(self, message: str) -> "typing.NoReturn":
            """A usage error is one line, as every other refusal (exit 2)."""
            where = self.prog.removeprefix("baton").strip()
            self.exit(2, f"baton: {_shown(f'{where}: ' if where else '')}{_shown(message)} — "
                      f"`{self.prog} --help` says more\n")

    parser = Parser(
        prog="baton", description="Approval-first conductor for coding agents. "
        "With no command, opens the full-screen app.",
        epilog=EXAMPLES + EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="store_true", help="print the version")
    parser.add_argument("-C", dest="directory", metavar="DIR", help="run as if started in DIR")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def add(name: str, target: str, help_text: str | None) -> argparse.ArgumentParser:
        """A subcommand; `help_text=None` keeps it out of `baton --help` (the internal
        `attempt` and `conductor`, which Baton starts itself): argparse lists only
        subcommands added with a help string."""
        if only is not None and name != only:
            return _UNUSED  # type: ignore[return-value]  # not needed: a stand-in, as said
        if help_text is None:
            p = sub.add_parser(name)
        else:
            p = sub.add_parser(name, help=help_text, description=help_text)
            public.append(name)
        p.set_defaults(handler=target)
        return p

    public: list[str] = []  # for `unknown_command`: those in the help, and every one
    setattr(parser, "public_commands", public)
    setattr(parser, "commands", sub.choices)

    def task_arg(q: argparse.ArgumentParser) -> None:
        """A task id positional, completed with the current plan's ids."""
        q.add_argument("id", type=task_id, metavar="N", help="the task's id (see `baton plan`)"
                       ).completer = _Complete("ids")  # type: ignore[attr-defined]

    p = add("plan", "plan:cmd_plan", "draft, load, answer or print the current plan")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--goal", help="draft a plan for this goal with the planner")
    src.add_argument("--from", dest="from_file", metavar="FILE", help="load a v1 plan document")
    src.add_argument("--answer", nargs="+", action="append", metavar="N TEXT",
                     help="answer planner question N (repeatable; or --answer FILE of `N: text` "
                     "lines)")
    src.add_argument("--yes", action="store_true", help="take every recommendation")
    p.add_argument("--new", action="store_true", help="archive the current plan first")
    p.add_argument("--skill", choices=("grilling", "to-spec"),
                   help="with --goal: interrogate the goal first, or write a spec to plan against")
    p.add_argument("--json", action="store_true", help="print the v1 plan document")

    modes = "|".join(m.value for m in Mode)
    players = ", ".join(BUILTIN_PLAYERS)

    def task_cmd(name: str, field: str, value_help: str, metavar: str, arg_help: str,
                 complete: _Complete | None = None) -> None:
        """`baton task-NAME N VALUE`. The value is checked by the plan, not here: whether an
        effort or model fits depends on the task's player, and its refusal says why."""
        q = add(f"task-{name}", "plan:cmd_task_field", f"set a task's {value_help}")
        task_arg(q)
        value = q.add_argument("value", metavar=metavar, help=arg_help)
        if complete is not None:
            value.completer = complete  # type: ignore[attr-defined]
        q.set_defaults(field=field)

    task_cmd("player", "player", "player (model and effort reset to its defaults)", "PLAYER",
             f"one of {players}, or a custom player of baton.toml (`baton players` says "
             "which are ready)", _Complete("players"))
    task_cmd("model", "model", "model", "MODEL", "a model of the task's player, or `default` "
             "for the player's own", _Complete("models"))
    task_cmd("effort", "effort", "effort (low, medium, high, or default)",
             "low|medium|high|default",
             "where the task's player has efforts; `default` for the player's own",
             _Complete("words", "low", "medium", "high", "default"))
    task_cmd("mode", "mode", "mode (build, research, manual)", modes,
             "build edits files in its own worktree; research is read-only; manual waits for "
             "`baton done N`", _Complete("words", *(m.value for m in Mode)))
    task_cmd("title", "title", "title", "TITLE", "one line")
    task_cmd("deps", "depends_on", "dependencies (comma-separated ids, empty for none)", "IDS",
             "task ids, comma-separated: 1,2 ('' for none)", _Complete("ids"))
    task_cmd("scope", "scope", "scope (comma-separated paths or globs)", "GLOBS",
             "paths or globs, comma-separated: src/api/*,tests/test_api.py")
    task_cmd("check", "check", "check command (run with sh -c after the report)", "CMD",
             "a shell command run in the task's worktree; its exit status decides ('' for none)")
    task_cmd("checkpoint", "checkpoint", "checkpoint flag (on or off)", "on|off",
             "on: in guarded mode the task stops at `baton checkpoint` before its risky step",
             _Complete("words", "on", "off"))
    task_cmd("skills", "skills", "skills (comma-separated names)", "NAMES",
             "skill names, comma-separated ('' for none)", _Complete("skills"))
    task_cmd("runner", "runner", "runner (local, or a [runners.NAME] from config)", "RUNNER",
             "local, or a [runners.NAME] of the configuration (`baton runners`)",
             _Complete("runners"))
    task_cmd("fallback", "fallback", "fallback players (comma-separated, in order)", "PLAYERS",
             "player or player:model, comma-separated: codex,opencode:anthropic/claude-sonnet-4 "
             "('' for none); used when a usage limit resets later than [limits] fallback_after",
             _Complete("players"))
    q = add("task-prompt", "plan:cmd_task_prompt", "set a task's prompt (from --text or stdin)")
    task_arg(q)
    q.add_argument("--text", help="the prompt (without it, read from stdin)")
    q = add("task-add", "plan:cmd_task_add", "add a task to the plan")
    q.add_argument("--title", required=True, help="one line")
    q.add_argument("--player", required=True, metavar="PLAYER",
                   help=f"one of {players}, or a custom player of baton.toml"
                   ).completer = _Complete("players")  # type: ignore[attr-defined]
    q.add_argument("--mode", default=Mode.BUILD.value, choices=[m.value for m in Mode],
                   help="build (the default), research or manual")
    q.add_argument("--deps", default="", metavar="IDS", help="task ids it waits for: 1,2"
                   ).completer = _Complete("ids")  # type: ignore[attr-defined]
    q.add_argument("--text", default="", help="the prompt")
    q = add("task-remove", "plan:cmd_task_remove", "remove a task nothing depends on")
    task_arg(q)
    add("approve", "plan:cmd_approve", "approve the whole plan")
    q = add("autonomy", "plan:cmd_autonomy", "print or change the plan's autonomy (any time; "
            "never voids approval)")
    q.add_argument("level", nargs="?", choices=[a.value for a in Autonomy],
                   help="guarded: checkpoints wait for you; watch: stalls and loops are "
                   "flagged too; autopilot: a failed task is retried once, then parked")
    add("trust", "info:cmd_trust", "trust this repository's baton.toml (records its hash)")

    q = add("run", "run:cmd_run", "run the approved plan (a view on the conductor)")
    q.add_argument("--approve", action="store_true", help="approve the plan (and checkpoints)")
    q.add_argument("--detach", action="store_true", help="start the conductor and return")
    q.add_argument("--until-failures", type=at_least_one, metavar="N",
                   help="after N failures nothing new starts (exit 1)")
    q.add_argument("--deadline", type=deadline, metavar="T",
                   help="a clock time (18:30) or a duration (2h): then nothing new starts (exit 3)")
    q = add("resume", "run:cmd_resume", "continue a paused or interrupted run")
    q.add_argument("--detach", action="store_true", help="start the conductor and return")
    q = add("status", "info:cmd_status", "plan, conductor and task states")
    q.add_argument("--json", action="store_true", help="as JSON (for scripts)")
    q = add("logs", "info:cmd_logs", "a task's agent output")
    task_arg(q)
    q.add_argument("-f", "--follow", action="store_true", help="keep printing as it runs")
    q = add("log", "info:cmd_log", "the run's event log")
    q.add_argument("--json", action="store_true", help="JSON lines")
    q = add("retry", "run:cmd_retry", "run a failed, parked or paused task again")
    task_arg(q)
    q.add_argument("--feedback", default=None, help="what to do differently this time")
    q = add("tell", "run:cmd_tell", "send a running task's agent a message (read at its next "
            "turn; it is not stopped)")
    task_arg(q)
    q.add_argument("text", metavar="TEXT", help="the message")
    q = add("stop", "run:cmd_stop", "stop a running task (its work is kept)")
    task_arg(q)
    q = add("take", "run:cmd_take", "take a task over in its worktree (its agent stops, session "
            "saved)")
    task_arg(q)
    q = add("budget", "run:cmd_budget", "print or change the plan's budget")
    q.add_argument("--tokens", type=count, metavar="N", help="tokens all agents may use")
    q.add_argument("--cost", type=amount, metavar="X", help="what all agents may cost, in USD")
    q.add_argument("--time", metavar="D", help="run wall time, e.g. 2h")
    q = add("done", "run:cmd_done", "mark a manual task done, or a task you took over (it lands)")
    task_arg(q)
    q = add("checkpoint-answer", "run:cmd_checkpoint_answer", "answer a task's checkpoint")
    task_arg(q)
    q.add_argument("answer", choices=["yes", "no"], help="yes: go ahead; no: stop")

    q = add("handoff", "handoff:cmd_handoff", "review, merge or publish the landed work")
    hs = q.add_subparsers(dest="action", metavar="ACTION", required=True)
    text = "the combined diff of landed tasks, and what was decided for you on the way"
    r = hs.add_parser("review", help=text, description=text + ". Changes nothing.")
    r.add_argument("--task", type=task_id, metavar="N", help="one task's diff only"
                   ).completer = _Complete("ids")  # type: ignore[attr-defined]
    r.add_argument("--json", action="store_true", help="the same as JSON")
    r.add_argument("--stat", action="store_true", help="files and line counts only")
    text = "merge landed task branches onto your branch in plan order"
    hs.add_parser("merge", help=text, description=text + ". Each merge is checked first; it "
                  "stops at the first conflict with your tree untouched, naming the files and "
                  "the command that finishes by hand. Run again, it skips what is merged. "
                  "A task branch deleted by hand stops it the same way. Exit 0 all merged, "
                  "1 stopped at a conflict or a deleted branch, 2 dirty tree or wrong branch.")
    text = "publish the landed work as pull requests through the forge's CLI (gh, glab)"
    r = hs.add_parser("pr", help=text, description=text + ". Never automatic. --single (the "
                      "default): one branch with the landed tasks merged in plan order, one pull "
                      "request. --stack: one branch and pull request per landed task, each based "
                      "on the one before. Run again, it updates the same branches and pull "
                      "requests (Baton's own branches only). Exit 2 when the forge's CLI is "
                      "missing or not signed in (nothing pushed).")
    r.add_argument("--remote", metavar="R", help="the git remote (default: the base branch's "
                   "upstream remote, else origin)")
    r.add_argument("--base", metavar="B", help="the branch the pull request goes into "
                   "(default: the branch the plan was approved on)")
    shape = r.add_mutually_exclusive_group()
    shape.add_argument("--single", dest="stack", action="store_false",
                       help="one pull request with every landed task (the default)")
    shape.add_argument("--stack", dest="stack", action="store_true",
                       help="one pull request per landed task, stacked in plan order")
    r.set_defaults(stack=False)  # (store_false would make --single's absence mean a stack)
    r.add_argument("--draft", action="store_true", help="open new pull requests as drafts")
    r.add_argument("--dry-run", action="store_true",
                   help="print the pushes and the forge calls, and do none of them")
    r.add_argument("--json", action="store_true", help="what was done, as JSON")
    q = add("comment", "handoff:cmd_comment", "a review comment on a landed line, for the task "
            "that wrote it (`baton retry N` sends it)")
    task_arg(q)
    q.add_argument("location", metavar="FILE:LINE", help="a line of the landed work (as the "
                   "combined diff shows it): the task that wrote it gets the comment")
    q.add_argument("text", metavar="TEXT", help="what should change")
    q = add("discard", "handoff:cmd_discard", "discard a task's work (and its dependents')")
    task_arg(q)
    q.add_argument("--with-dependents", action="store_true",
                   help="a landed task: discard the tasks built on it too")
    q = add("gc", "handoff:cmd_gc", "remove worktrees of merged or discarded work")
    q.add_argument("--dry-run", action="store_true",
                   help="say what would be removed, and remove nothing")

    q = add("players", "info:cmd_players", "which players are ready, and why not")
    q.add_argument("--json", action="store_true", help="as JSON (for scripts)")
    q = add("runners", "info:cmd_runners", "where tasks can run: each runner, reachable or not, "
            "its workers and what they offer")
    q.add_argument("--json", action="store_true", help="as JSON (for scripts)")
    add("doctor", "info:cmd_doctor", "check this machine and say how to fix what is missing")
    q = add("completion", "completion:cmd_completion", "print shell completion code: "
            "eval \"$(baton completion bash)\"")
    q.add_argument("shell", choices=("bash", "zsh", "fish"), help="the shell to complete in")
    q = add("demo", "demo:cmd_demo", "run a sample plan end to end, offline")
    q.add_argument("--keep", action="store_true", help="keep the sample repository")
    q.add_argument("--dir", help="where to make the sample repository")
    q.add_argument("--tui", action="store_true",
                   help="open the full app on the sample instead: plan, approve, run, hand off")

    q = add("web", "web:cmd_web", "open the editor's Baton view in a browser: prints the URL "
            "(127.0.0.1, with a token) and serves until interrupted")
    q.add_argument("--port", type=int, default=0, metavar="N",
                   help="the port on 127.0.0.1 (default: a free one)")

    q = add("attempt", "agent:cmd_attempt", None)
    q.add_argument("attempt_id", type=int)
    q.add_argument("--state", required=True)
    q = add("conductor", "agent:cmd_conductor", None)
    q.add_argument("--root")  # or, with --on-cue, on stdin once cued (run/early.py)
    q.add_argument("--on-cue", action="store_true")
    q = add("report", "agent:cmd_report",
            "(for agents) report done, failed, progress, or a usage limit (limited)")
    q.add_argument("status", choices=REPORT_STATUSES,
                   help="done (the work is finished), failed, progress, or limited")
    q.add_argument("message", nargs="?", default=None,
                   help="what happened, in a line (or --summary / --reason)")
    q.add_argument("--summary", help="done: what was built")
    q.add_argument("--reason", help="failed or limited: why")
    q.add_argument("--until", metavar="TIME",
                   help="limited: when the limit resets (epoch seconds or ISO 8601)")
    q.add_argument("--tokens", type=count, metavar="N", help="tokens this agent used")
    q.add_argument("--cost", type=amount, metavar="X", help="what this agent cost, in USD")
    q = add("checkpoint", "agent:cmd_checkpoint", "(for agents) ask before an irreversible step")
    q.add_argument("what", help="the irreversible step, in a line (it waits for an answer)")
    q.add_argument("--evidence", metavar="FILE|-", help="the dry run's output (- reads stdin)")
    q.add_argument("--wait", type=amount, metavar="SECONDS",
                   help="wait this long for the answer (default: [limits] checkpoint_wait)")
    add("acp", "agent:cmd_acp", "speak the Agent Client Protocol on stdio: Baton as the agent "
        "of an ACP editor (Zed, JetBrains, Neovim, Emacs), started in the project folder")
    add("inbox", "agent:cmd_inbox", "(for agents) read the messages the person sent this task")
    q = add("mcp", "agent:cmd_mcp", "the stdio MCP server: baton_report for agents, or with "
            "--front the tools an assistant drives Baton with")
    q.add_argument("--front", action="store_true",
                   help="serve an assistant in your editor: baton_plan, baton_answer, "
                   "baton_edit_task, baton_status, baton_review, baton_logs (approving, running, "
                   "merging and discarding stay yours)")
    q = add("serve", "serve:cmd_serve", "the app-server: JSON-RPC 2.0 for editors, browsers "
            "and other front ends (one object per line)")
    where = q.add_mutually_exclusive_group()
    where.add_argument("--stdio", action="store_true",
                       help="serve the process that started this one on stdin/stdout (default)")
    where.add_argument("--socket", metavar="PATH", help="listen on a Unix socket (mode 0600)")
    where.add_argument("--listen", metavar="URL",
                       help="a WebSocket, ws://127.0.0.1:PORT (0: any free port); prints the "
                       "URL with its token first")
    where.add_argument("--schema", action="store_true",
                       help="print the protocol's JSON Schema and exit")
    where.add_argument("--typescript", action="store_true",
                       help="print the protocol's TypeScript declarations and exit")
    q.add_argument("--allow-remote", action="store_true",
                   help="with --listen: allow an address beyond loopback (the token still holds)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; return its exit code. Errors are one clear line each, no traceback."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if "_ARGCOMPLETE" in os.environ:  # a shell completing `baton …` (see `baton completion`)
        from baton_tui.commands.completion import complete  # lazy: only a shell completing `baton …` needs it

        complete(build_parser())
    if argv[:1] in (["run"], ["resume"]) and not {"-h", "--help"} & set(argv):
        from baton_tui.api.running import conductor_first  # stdlib only

        with conductor_first():  # its imports overlap all of ours (`api.conductor_ahead`)
            return _main(argv)
    return _main(argv)


def _main(argv: list[str]) -> int:
    args = _quick(argv)
    if args is None:
        first = argv[0] if argv else None
        # These build their own subcommand only: read from a second terminal, by agents,
        # or on the way to a run's start (the run waits for them).
        fast = first in ("status", "report", "log", "checkpoint", "attempt", "logs", "run",
                         "resume", "inbox")
        parser = build_parser(first if fast else None)
        unknown = unknown_command(parser, argv)
        if unknown:
            print(f"baton: {_shown(unknown)}", file=sys.stderr)
            return 2
        try:
            args = parser.parse_args(argv)
        except SystemExit as exc:  # argparse: --help is 0, a usage error is 2
            return int(exc.code or 0)
    if args.version:
        from baton_tui.version import describe  # lazy: only `--version` reads it

        print(describe())  # the version, and the commit Baton was built from when known
        return 0
    if args.directory:
        try:
            os.chdir(args.directory)
        except OSError as exc:
            print(f"baton: -C {_shown(args.directory)}: {exc.strerror or 'cannot enter it'}",
                  file=sys.stderr)
            return 2
    from baton_tui.core.errors import BatonError  # lazy: `baton --help` and `--version` never need it

    try:
        if not getattr(args, "command", None):
            from baton_tui.tui.launch import run_app  # lazy: textual: only the full-screen app needs it

            return run_app()
        module, func = args.handler.split(":")
        handler = getattr(import_module(f"baton_tui.commands.{module}"), func)
        args.baton = main  # a command that runs others (the demo) runs them as the CLI does
        folder = _folder_notice(args.command)
        try:
            return int(handler(args) or 0)
        finally:
            if folder is not None and folder[1].exists():
                print(f"baton: note: {_shown(folder[0])}", file=sys.stderr)
    except BatonError as exc:
        for line in exc.lines:  # errors often quote bad input: never let it drive the terminal
            print(f"baton: {_shown(line)}", file=sys.stderr)
        return exc.code
    except KeyboardInterrupt:
        print("baton: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:
        db = sys.modules.get("baton_tui.store.db")  # (never loaded: not the store's error)
        damaged = db.damaged(exc) if db is not None else None
        if damaged is None:
            raise
        print(f"baton: {_shown(damaged.message)}", file=sys.stderr)
        return damaged.code


# Commands that only read, or that Baton and agents run: they never create the state.
_READERS = frozenset({"status", "log", "logs", "report", "checkpoint", "inbox", "attempt",
                      "conductor", "mcp", "players", "runners", "doctor", "completion", "demo",
                      "serve", "web"})


def _folder_notice(command: str) -> "tuple[str, Path] | None":
    """The folder mode notice and the `.baton/state` a command may create in a folder outside
    git, when it does not exist yet: its first creation gets the notice (`api.folder_notice`,
    which the app shows too)."""
    if command in _READERS:
        return None
    from baton_tui import api  # lazy: only commands that may write need it

    notice = api.folder_notice()
    return (notice, api.state_dir()) if notice else None


def unknown_command(parser: "argparse.ArgumentParser", argv: list[str]) -> str | None:
    """One line for a command `baton` does not have, with the public commands it may have
    meant — not argparse's list of every name, the internal ones among them."""
    public, every = getattr(parser, "public_commands", None), getattr(parser, "commands", {})
    words = iter(argv)
    for word in words:
        if word == "-C":
            next(words, None)
        elif word == "--" or not word.startswith("-"):
            break
    else:
        return None
    if public is None or word == "--" or word in every:
        return None
    import difflib  # lazy: only a mistyped command needs it

    close = difflib.get_close_matches(word, public, n=3, cutoff=0.6) \
        or [name for name in public if name.startswith(word[:3])][:3]
    meant = f" — did you mean {' or '.join(close)}?" if close else ""
    return f"unknown command {word[:40]!r}{meant} (`baton --help` lists them)"


def innermost(parser: "argparse.ArgumentParser", parsed: "argparse.Namespace"
              ) -> "argparse.ArgumentParser":
    """The (sub)command parser `parsed` went down to: `baton handoff review`'s, say."""
    import argparse  # lazy: only a usage error needs it

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            chosen = action.choices.get(getattr(parsed, action.dest, None) or "")
            if chosen is not None:
                return innermost(chosen, parsed)
    return parser


def unrecognized(extras: list[str], parser: "argparse.ArgumentParser") -> str:
    """argparse's "unrecognized arguments" with the options `parser` has that are close."""
    import difflib  # lazy: only a mistyped option needs it

    options = [o for action in parser._actions for o in action.option_strings]
    close = [match for word in extras if word.startswith("-")
             for match in difflib.get_close_matches(word.split("=")[0], options, n=1,
                                                    cutoff=0.6)]
    meant = f" — did you mean {' or '.join(dict.fromkeys(close))}?" if close else ""
    return f"unrecognized arguments: {' '.join(extras)}{meant}"


def entry() -> None:
    """The `baton` command (and `python -m baton_tui`): `main`, then out at once."""
    _leave(main())


def _leave(code: int) -> None:
    """Exit with `code` once the output is out and the store closed, without the rest of the
    interpreter's teardown: freeing every module a command imported (pydantic's, for a plan)
    kept a person waiting up to 0.2 s after the last line (measured at a run's end). With
    another thread still alive (the TUI's, a planner's client), the usual exit."""
    threading = sys.modules.get("threading")
    if threading is None or threading.active_count() == 1:
        db = sys.modules.get("baton_tui.store.db")
        if db is not None:
            db.close_all()  # the last to close folds the write-ahead log back: never left
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):  # a closed pipe: the usual exit, as before
            sys.exit(code)
        os._exit(code)
    sys.exit(code)


# The second, hand-written argv parser: kept for `baton report` and `baton status` (the fast
# paths of tests/test_import_hygiene.py and benchmarks/bench_status.py) and the conductor's start.
def _quick(argv: list[str]) -> "argparse.Namespace | None":
    """The commonest calls, parsed without argparse: `baton --version`, `baton status
    [--json]` (a second terminal, a script polling), an agent's `baton report …` and Baton's
    own start of its conductor — importing argparse and building even one subcommand took a fifth of a
    100-task status and a sixth of a report, and the whole parser 28 ms of a conductor's
    start (which the run waits for).
    The same attributes argparse would give; anything else (`--help`, `-C`, a typo, a form
    this does not know) goes to the real parser, which decides."""
    if argv == ["--version"]:  # the whole parser was most of the binary's `--version`
        return SimpleNamespace(version=True, directory=None)  # type: ignore[return-value]
    if argv in (["status"], ["status", "--json"]):
        return SimpleNamespace(  # type: ignore[return-value]  # read like a Namespace
            version=False, directory=None, command="status", handler="info:cmd_status",
            json=len(argv) == 2)
    by_root = len(argv) == 3 and argv[:2] == ["conductor", "--root"] \
        and not argv[2].startswith("-")
    if by_root or argv == ["conductor", "--on-cue"]:
        return SimpleNamespace(  # type: ignore[return-value]
            version=False, directory=None, command="conductor", handler="agent:cmd_conductor",
            on_cue=not by_root, root=argv[2] if by_root else None)
    found = _quick_report(argv[1:]) if argv[:1] == ["report"] else None
    if found is None:
        return None
    return SimpleNamespace(version=False, directory=None, command="report",  # type: ignore
                           handler="agent:cmd_report", **found)


def _quick_report(rest: list[str]) -> dict | None:
    """`report STATUS [MESSAGE] [--summary S] [--reason R] [--until T] [--tokens N]
    [--cost X]` (also `--option=value`), as argparse reads it; None for anything else."""
    if not rest or rest[0] not in REPORT_STATUSES:
        return None
    found: dict = {"status": rest[0], "message": None,
                   **{name[2:]: None for name in _REPORT_OPTIONS}}
    words = iter(rest[1:])
    if len(rest) > 1 and not rest[1].startswith("-"):  # argparse takes MESSAGE only here
        found["message"] = next(words)
    for word in words:
        name, equals, value = word.partition("=")
        if not word.startswith("-"):
            return None  # a message elsewhere, or a second one: argparse's error to give
        if name not in _REPORT_OPTIONS:
            return None  # -h, --help, an abbreviation, `--`, a typo
        if not equals:
            given = next(words, None)
            if given is None or given.startswith("-"):
                return None
            value = given
        try:
            found[name[2:]] = _REPORT_OPTIONS[name](value)
        except Exception:  # a bad number (argparse's ArgumentTypeError): argparse says why
            return None
    return found


def _shown(text: str) -> str:
    # lazy: only an error message needs it (`baton status`, `--help`)
    from baton_tui.redact import escape_controls

    return escape_controls(text)


if __name__ == "__main__":
    sys.exit(main())
