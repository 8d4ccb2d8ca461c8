"""Helpers shared by the test modules (no tests here).

`tests/` is on `sys.path` through `[tool.pytest.ini_options] pythonpath` in pyproject.toml, so a
test imports them as `from helpers.core import git, write_plan`. Fixtures every test can use
without an import live in tests/conftest.py.

- core: the repository root, `git`, the `baton` CLI in a subprocess, plan files.
- gitops_fixtures: real repositories for the gitops unit tests (an autouse git isolation fixture).
- run_kit: scripted players, plans and event waits for the run-engine tests.
- tui_support: a workspace with a plan, an app factory and waits for the TUI tests.
- real_cli_kit: the real agent CLIs (installed by `.ci/run`), and what their runs leave behind.
- real_players: one profile per real agent CLI for the parametrised player suite.
"""
