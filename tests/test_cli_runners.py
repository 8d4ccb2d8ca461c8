"""Runners, the contract plumbing (issue 27): `[runners.NAME]` tables, the task field
`runner`, `baton task-runner`, `status --json`'s `runner`/`node`/`job`, `baton runners` and
its part in `baton doctor` — through the real CLI in subprocesses, on real git repositories.
No test here reaches any scheduler: an unreachable one is an address nothing listens on."""

from __future__ import annotations

import json
import socket

from helpers.run_kit import DEMO_AGENT, load_plan, status, task, write_config


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def lab(port: int | None = None, **extra: object) -> str:
    port = port or free_port()
    lines = ["", "[runners.lab]", 'kind = "dask"', f'address = "tcp://127.0.0.1:{port}"',
             'exchange = "/srv/git/project.git"']
    lines += [f"{k} = {json.dumps(v)}" for k, v in extra.items()]
    return "\n".join(lines) + "\n"


def plan_runners(baton) -> dict[int, str]:
    doc = baton.json("plan", "--json")
    return {t["id"]: t["runner"] for t in doc["tasks"]}


def test_a_task_runs_locally_unless_it_names_a_runner(baton, repo):
    write_config(repo, {"agent": DEMO_AGENT}, extra=lab())
    load_plan(baton, [task(1), task(2, runner="lab")])
    assert plan_runners(baton) == {1: "local", 2: "lab"}
    tasks = {t["id"]: t for t in status(baton)["tasks"]}
    assert (tasks[1]["runner"], tasks[1]["node"], tasks[1]["job"]) == ("local", None, None)
    assert (tasks[2]["runner"], tasks[2]["node"], tasks[2]["job"]) == ("lab", None, None)


def test_task_runner_sets_the_field_and_voids_approval(baton, repo):
    write_config(repo, {"agent": DEMO_AGENT}, extra=lab())
    load_plan(baton, [task(1)], approve=True)
    result = baton("task-runner", "1", "lab")
    assert result.returncode == 0, result.stderr
    assert "task 1: runner = lab" in result.stdout
    assert plan_runners(baton) == {1: "lab"}
    assert status(baton)["plan"]["approved"] is False
    assert baton("task-runner", "1", "local").returncode == 0
    assert plan_runners(baton) == {1: "local"}


def test_an_unknown_runner_is_one_line_exit_2_and_the_plan_is_unchanged(baton, repo):
    write_config(repo, {"agent": DEMO_AGENT}, extra=lab())
    load_plan(baton, [task(1)])
    before = baton("plan", "--json").stdout
    for name in ("nowhere", "Bad Name", "../x"):
        result = baton("task-runner", "1", name)
        assert result.returncode == 2, result.stdout + result.stderr
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert "runner" in result.stderr
    assert baton("plan", "--json").stdout == before


def test_a_plan_naming_an_unknown_runner_is_refused(baton, repo):
    write_config(repo, {"agent": DEMO_AGENT})
    path = repo.parent / "plan.json"
    path.write_text(json.dumps({"version": 1, "goal": "g", "tasks": [task(1, runner="lab")]}))
    result = baton("plan", "--from", str(path))
    assert result.returncode == 2
    assert "unknown runner 'lab'" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_new_tasks_take_the_configured_default_runner(baton, repo):
    write_config(repo, {"agent": DEMO_AGENT}, extra=lab().replace(
        "[runners.lab]", '[runners]\ndefault = "lab"\n\n[runners.lab]'))
    load_plan(baton, [task(1), task(2, runner="local")])
    assert plan_runners(baton) == {1: "lab", 2: "local"}
    result = baton("task-add", "--title", "More", "--player", "agent")
    assert result.returncode == 0, result.stderr
    assert plan_runners(baton)[3] == "lab"


def test_unknown_keys_and_bad_values_in_runner_tables_are_refused(baton, repo):
    cases = {
        lab(colour="blue"): "runners.lab.colour: unknown key",
        lab().replace('kind = "dask"', 'kind = "ray"'): "runners.lab.kind",
        lab().replace("tcp://127.0.0.1", "http://127.0.0.1"): "runners.lab.address",
        lab().replace('"/srv/git/project.git"', '"ext::sh -c touch% /tmp/x"'):
            "runners.lab.exchange",
        lab().replace('"/srv/git/project.git"', '"--upload-pack=touch /tmp/x"'):
            "runners.lab.exchange",
        lab().replace("[runners.lab]", "[runners.local]"): "runners",
        '\n[runners]\ndefault = "nowhere"\n': "default runner 'nowhere'",
        lab(max_parallel=0): "runners.lab.max_parallel",
    }
    for extra, expected in cases.items():
        write_config(repo, {"agent": DEMO_AGENT}, extra=extra)
        result = baton("doctor")
        assert result.returncode == 2, (extra, result.stdout, result.stderr)
        assert expected in result.stdout + result.stderr, (extra, result.stdout)


def test_a_runner_from_the_repository_waits_for_trust(baton, repo):
    write_config(repo, {"agent": DEMO_AGENT}, extra=lab())
    load_plan(baton, [task(1)], trust=False)
    result = baton("runners", "--json")
    assert result.returncode == 1, result.stderr
    found = json.loads(result.stdout)
    lab_entry = next(r for r in found if r["name"] == "lab")
    assert lab_entry["trusted"] is False and lab_entry["reachable"] is False
    assert "baton trust" in lab_entry["reason"]
    doctor = baton("doctor")
    assert "runners.lab" in doctor.stdout  # named among the commands waiting for trust


def test_runners_says_why_an_unreachable_scheduler_is_unreachable(baton, repo):
    port = free_port()
    write_config(repo, {"agent": DEMO_AGENT}, extra=lab(port))
    load_plan(baton, [task(1)])  # (trusts baton.toml)
    result = baton("runners", "--json")
    assert result.returncode == 1, result.stderr
    found = {r["name"]: r for r in json.loads(result.stdout)}
    assert list(found) == ["local", "lab"]
    assert found["local"]["reachable"] is True
    entry = found["lab"]
    assert entry["reachable"] is False and entry["trusted"] is True
    assert entry["address"] == f"tcp://127.0.0.1:{port}"
    assert entry["reason"] and "\n" not in entry["reason"]
    text = baton("runners")
    assert text.returncode == 1
    assert f"✗ runner lab (dask at tcp://127.0.0.1:{port})" in text.stdout
    doctor = baton("doctor")
    assert f"✗ runner lab (dask at tcp://127.0.0.1:{port})" in doctor.stdout


def test_runners_without_a_cluster_lists_this_machine(baton, repo):
    found = baton.json("runners", "--json")
    assert [r["name"] for r in found] == ["local"]
    assert found[0]["reachable"] is True and found[0]["versions_match"] is True


def test_help_and_status_do_not_import_distributed(baton, repo):
    import subprocess
    import sys

    write_config(repo, {"agent": DEMO_AGENT}, extra=lab())
    load_plan(baton, [task(1, runner="lab")])
    code = ("import sys\nfrom baton_tui import cli\n"
            "for argv in (['--help'], ['status'], ['status', '--json'], ['plan', '--json']):\n"
            "    try:\n        cli.main(argv)\n    except SystemExit:\n        pass\n"
            "assert 'distributed' not in sys.modules, 'distributed imported'\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr


def test_a_run_with_a_task_on_an_untrusted_runner_is_refused(baton, repo):
    write_config(repo, {"agent": DEMO_AGENT}, extra=lab())
    load_plan(baton, [task(1, runner="lab")], trust=False)
    result = baton("run", "--approve")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "runners.lab" in result.stderr and "baton trust" in result.stderr
    assert status(baton)["tasks"][0]["state"] in ("draft", "queued")
