"""The Dask runner's wire (`runners/dask/job.py`): a job and a record read back as they were
written, a job of another version (an unversioned one is version 1) is refused in one line,
and a record sealed over its wire form still checks once it has travelled as JSON. No
cluster: these are the types both sides agree on."""

from __future__ import annotations

import json

import pytest

from baton_tui.runners.dask import exchange
from baton_tui.runners.dask.job import JOB_WIRE, RECORD_WIRE, Job, JobRecord, WireError
from baton_tui.runners.homecoming import Ran, RemoteEvent


def a_job(**changes) -> Job:
    fields = dict(job="baton-plan-3-7-0a1b2c3d", exchange="/srv/exchange.git",
                  base="a" * 40, task=3, slug="plan", resource="agent",
                  doc={"version": 1, "goal": "g", "tasks": []}, workdir="/scratch",
                  prompt="# Task 3\nDo it; the tests failed: fix them.", resume_message=None,
                  session_id="s-1", trusted="h" * 64,
                  versions={"baton": "1.0", "python": "3.11"}, seal="0f" * 16)
    fields.update(changes)
    return Job(**fields)


def test_a_job_reads_back_as_it_was_written_through_json():
    job = a_job()
    wire = json.loads(json.dumps(job.to_wire()))  # (the store's copy travels as JSON)
    assert wire["v"] == JOB_WIRE and wire["prompt"].startswith("# Task 3")
    assert Job.from_wire(wire) == job
    assert "keep" not in wire  # the node always cleans up: no switch nobody sets


def test_a_job_of_another_version_or_an_unversioned_one_is_refused_in_one_line():
    wire = a_job().to_wire()
    old = {k: v for k, v in wire.items() if k not in ("v", "prompt")}
    old.update(feedback="fix the test", artifacts={"1": "report of 1"})  # (as it was)
    with pytest.raises(WireError, match=r"wire version 1, not 2") as refused:
        Job.from_wire(old)
    assert "\n" not in str(refused.value)
    with pytest.raises(WireError, match="wire version 3"):
        Job.from_wire({**wire, "v": 3})
    with pytest.raises(WireError, match="task"):
        Job.from_wire({k: v for k, v in wire.items() if k != "task"})


def test_a_record_sealed_over_its_wire_form_checks_after_travelling_and_reads_back():
    record = JobRecord(
        claimed=True, node="tcp://127.0.0.1:1",
        attempt=Ran(exit_status=0, report={"status": "done", "summary": "ok"},
                    session_id="s-2", started=1.5, ended=2.5, node_attempt=1),
        events=(RemoteEvent("task.progress", {"message": "half", "attempt": 1}, 2.0, 4),),
        head="b" * 40, result="c" * 40)
    wire = record.to_wire()
    wire["seal"] = exchange.seal("secret", "job", wire, b"output")
    travelled = json.loads(json.dumps(wire, sort_keys=True))
    assert exchange.sealed("secret", "job", travelled, b"output")
    assert not exchange.sealed("other", "job", travelled, b"output")
    back = JobRecord.from_wire(travelled)
    assert back.attempt == record.attempt and back.events == record.events
    assert back.seal == wire["seal"] and back.head == record.head


def test_a_record_of_a_job_that_ran_nothing_says_why_and_nothing_else():
    wire = JobRecord(claimed=False, node=None, why="already run on this node").to_wire()
    assert wire == {"v": RECORD_WIRE, "claimed": False, "node": None,
                    "why": "already run on this node"}
    assert JobRecord.from_wire(wire).why == "already run on this node"
    with pytest.raises(WireError):
        JobRecord.from_wire({**wire, "v": 99})


def test_what_a_running_job_says_is_heard_whether_its_files_come_as_tuples_or_lists(tmp_path):
    """Dask hands a worker event back with the tuples it was sent (a worker's own events)
    or lists; both are the agent's changed files, and its output goes to the log."""
    from baton_tui.runners.dask.follow import Followed

    log = tmp_path / "output.log"
    for files in ((("elsewhere.txt", 3, 9), ("src/in.txt", 2, 9)),
                  [["src/in.txt", 2, 9], ["elsewhere.txt", 3, 9]]):
        followed = Followed("baton-plan-1-1-0a1b2c3d", None, str(log))
        followed.hear((1.0, {"node": "tcp://127.0.0.1:1", "claimed": True}))
        followed.hear((2.0, {"files": files, "cpu": 1.25}))
        followed.hear((3.0, {"text": "wrote it\n", "at": 9}))
        followed.hear((4.0, "not a message"))
        assert followed.node == "tcp://127.0.0.1:1" and followed.cpu == 1.25
        assert followed.files == (("elsewhere.txt", 3, 9), ("src/in.txt", 2, 9))
        assert followed.take_output() == b"wrote it\n" and followed.take_output() == b""
    assert log.read_text() == "wrote it\n" * 2
