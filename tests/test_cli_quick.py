"""The quick parse of `baton status`, `baton report` and `baton conductor` (cli._quick)
reads every form it accepts exactly as argparse does, and leaves every other form to
argparse."""

from __future__ import annotations

import pytest

from baton_tui import cli

SAME = [
    ["report", "done", "--summary", "built the parser"],
    ["report", "done", "--summary=built it"],
    ["report", "done", "--summary="],
    ["report", "done", "all of it"],
    ["report", "failed", "--reason", "tests fail", "--tokens", "1200", "--cost", "0.25"],
    ["report", "failed", "--tokens=1_000", "--reason", "x"],
    ["report", "progress", "halfway"],
    ["report", "progress", "--summary", "a", "--summary", "b"],  # the last one wins
    ["report", "limited", "--until", "2026-12-01T14:05", "--reason", "quota"],
    ["report", "limited", "--until=-5"],
    ["report", "done", "message", "--cost", "1e-3", "--tokens", " 7"],
    ["report", "done", "--summary", ""],
    ["status"],
    ["status", "--json"],
    ["conductor", "--on-cue"],
    ["conductor", "--root", "/work/repo with space"],
]

LEFT_TO_ARGPARSE = [
    ["report"],
    ["report", "finished"],
    ["report", "--summary", "x", "done"],
    ["report", "done", "--help"],
    ["report", "done", "-h"],
    ["report", "done", "--sum", "x"],  # an abbreviation argparse allows
    ["report", "done", "one", "two"],
    ["report", "done", "--summary", "x", "late message"],  # argparse refuses it
    ["report", "done", "--summary"],
    ["report", "done", "--summary", "--reason"],
    ["report", "done", "--tokens", "-5"],
    ["report", "done", "--tokens", "many"],
    ["report", "done", "--", "message"],
    ["report", "failed", "-x broke"],
    ["status", "--json", "--json"],
    ["-C", "repo", "report", "done", "--summary", "x"],
    ["conductor"],
    ["conductor", "--root"],
    ["conductor", "--root", "--on-cue"],
    ["conductor", "--on-cue", "--root", "/r"],
    ["conductor", "--help"],
]


@pytest.mark.parametrize("argv", SAME, ids=" ".join)
def test_the_quick_parse_reads_what_argparse_reads(argv):
    quick = cli._quick(argv)
    assert quick is not None
    assert vars(quick) == vars(cli.build_parser(argv[0]).parse_args(argv))


@pytest.mark.parametrize("argv", LEFT_TO_ARGPARSE, ids=" ".join)
def test_every_other_form_goes_to_argparse(argv):
    assert cli._quick(argv) is None
