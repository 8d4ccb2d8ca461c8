"""The cluster runner's pieces that need no cluster: job and ref names (never taken raw from
plan text), the exchange's git steps on real repositories (a snapshot that moves nothing, the
claim only one push can make, bringing a remote attempt's work home), and a worker that runs
another Baton or Python version refusing the job with one clear line."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from baton_tui.gitops.git import GitError
from baton_tui.runners.dask import node as dask_node
from baton_tui.runners.dask import exchange
from helpers.core import git


@pytest.mark.parametrize("slug", ["plan", "Drop ../../etc; rm -rf /", "a" * 300, "",
                                  "ünïcode-slug", "refs/heads/main", "-x --force"])
def test_job_names_and_refs_are_safe_whatever_the_slug(slug, tmp_path):
    job = exchange.job_name(slug, 12, 345)
    assert job.startswith("baton-") and job.count("-12-345-") == 1
    refs = exchange.refs_of(job)
    git(tmp_path, "init", "-q")
    for ref in refs.values():
        assert ref.startswith(f"refs/baton/jobs/{job}/")
        assert exchange.check_ref(ref) == ref
        assert subprocess.run(["git", "check-ref-format", ref], cwd=tmp_path).returncode == 0
    assert exchange.job_name(slug, 12, 345) != job  # a random part: never reused


@pytest.mark.parametrize("bad", ["refs/baton/jobs/a..b/base", "refs/baton/jobs/x.lock/base",
                                 "refs/baton/jobs/x y/base", "refs//x", "refs/x/", "x",
                                 "refs/baton/.x/base", "refs/a@{1}", "refs/a:b"])
def test_check_ref_refuses_what_git_refuses_without_running_git(bad, tmp_path, monkeypatch):
    git(tmp_path, "init", "-q")
    assert subprocess.run(["git", "check-ref-format", bad], cwd=tmp_path).returncode != 0

    def no_git(*args, **kwargs):
        raise AssertionError("a git process was started")

    monkeypatch.setattr(exchange, "run_git", no_git)
    monkeypatch.setattr(exchange, "git", no_git)
    with pytest.raises(ValueError):
        exchange.check_ref(bad)
    assert exchange.check_ref("refs/baton/jobs/baton-plan-1-2-ab/base")


@pytest.mark.parametrize("bad", ["../x", "a/b", "A", "x y", "", "a" * 200])
def test_refs_of_refuses_what_is_not_a_job_name(bad):
    with pytest.raises(ValueError):
        exchange.refs_of(bad)


def _repo(path: Path) -> Path:
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    (path / "a.txt").write_text("a\n")
    git(path, "add", ".")
    git(path, "commit", "-q", "-m", "a")
    return path


def test_a_snapshot_commits_the_worktree_without_moving_anything(tmp_path):
    repo = _repo(tmp_path / "repo")
    head = git(repo, "rev-parse", "HEAD")
    assert exchange.snapshot(repo, "clean") == (head, head)
    (repo / "a.txt").write_text("changed\n")
    (repo / "new.txt").write_text("new\n")
    made = exchange.snapshot(repo, "dirty")
    snap = made.commit
    assert made.head == head and snap != head and git(repo, "rev-parse", f"{snap}^") == head
    assert git(repo, "show", f"{snap}:new.txt") == "new"
    assert git(repo, "rev-parse", "HEAD") == head  # branch, index and files as they were
    assert git(repo, "status", "--porcelain").splitlines() == ["M a.txt", "?? new.txt"]


def test_only_one_push_can_claim_an_attempt(tmp_path):
    repo = _repo(tmp_path / "repo")
    bare = tmp_path / "exchange.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    refs = exchange.refs_of(exchange.job_name("plan", 1, 1))
    head = git(repo, "rev-parse", "HEAD")
    claims = [git(repo, "commit-tree", f"{head}^{{tree}}", "-p", head, "-m", f"claim {n}")
              for n in (1, 2)]
    assert exchange.claim(repo, str(bare), [(claims[0], refs["claim"])]) == {refs["claim"]}
    # Claimed again in one push with another attempt's claim: only the new one is created.
    other = exchange.refs_of(exchange.job_name("plan", 2, 2))["claim"]
    assert exchange.claim(repo, str(bare), [(claims[1], refs["claim"]), (claims[1], other)]) \
        == {other}
    assert exchange.remote_ref(repo, str(bare), refs["claim"]) == claims[0]
    assert exchange.remote_ref(repo, str(bare), refs["result"]) is None
    assert exchange.claim(repo, str(tmp_path / "nowhere.git"), [(claims[1], refs["claim"])]) \
        == set()


def test_bring_home_leaves_the_agent_s_commits_and_its_changes_as_a_local_agent_would(tmp_path):
    repo = _repo(tmp_path / "repo")
    base = git(repo, "rev-parse", "HEAD")
    node = tmp_path / "node"
    subprocess.run(["git", "clone", "-q", str(repo), str(node)], check=True)
    (node / "committed.txt").write_text("the agent's own commit\n")
    git(node, "add", ".")
    git(node, "commit", "-q", "-m", "agent commit")
    head = git(node, "rev-parse", "HEAD")
    (node / "a.txt").unlink()
    (node / "left.txt").write_text("left uncommitted\n")
    result = exchange.snapshot(node, "as left").commit
    git(repo, "fetch", "-q", str(node), f"{result}:refs/baton/result")
    exchange.bring_home(repo, base, head, result)
    assert git(repo, "rev-parse", "HEAD") == head  # its commits on the branch
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=repo,
                            capture_output=True, text=True, check=True).stdout.splitlines()
    assert sorted(status) == [" D a.txt", "?? left.txt"]  # the rest uncommitted, for Baton


def test_a_worker_of_another_version_refuses_the_job_in_one_line():
    answer = dask_node.run_job({
        "job": exchange.job_name("plan", 1, 1), "exchange": "/nonexistent.git",
        "versions": {"baton": "0.0.0", "python": "2.7.18"}})
    assert answer["claimed"] is False
    assert "Baton 0.0.0 on Python 2.7.18" in answer["why"] and "\n" not in answer["why"]


def test_a_record_reads_back_as_it_was_written(tmp_path):
    repo = _repo(tmp_path / "repo")
    record = {"claimed": True, "attempt": {"exit_status": 0, "report": {"status": "done"}}}
    output = b"line one\n\x00binary\xff\nlast line without newline"
    commit = exchange.record_commit(repo, record, output, None)
    assert exchange.read_record(repo, commit) == (record, output)
    assert exchange.read_record(repo, exchange.record_commit(repo, {}, b"", None)) == ({}, b"")


def test_transfers_asked_together_go_as_one_and_each_caller_hears_how_it_went():
    import threading

    sent: list[list[str]] = []
    first_sent, release = threading.Event(), threading.Event()

    def send(specs: list[str]) -> None:
        sent.append(specs)
        if len(sent) == 1:  # the first transfer is under way while the others ask
            first_sent.set()
            assert release.wait(30)
        if "bad" in specs:
            raise GitError(["push"], "refused", 1)

    batched = exchange.Batched(send)
    heard: dict[str, object] = {}

    def ask(spec: str) -> None:
        try:
            batched(spec)
            heard[spec] = "ok"
        except GitError as exc:
            heard[spec] = exc

    first = threading.Thread(target=ask, args=("a",))
    first.start()
    assert first_sent.wait(30)
    others = [threading.Thread(target=ask, args=(spec,)) for spec in ("b", "bad", "c")]
    for thread in others:
        thread.start()
    while len(batched._waiting) < 3:  # all three wait for the next transfer
        threading.Event().wait(0.01)
    release.set()
    for thread in (first, *others):
        thread.join(30)
    assert sent[0] == ["a"] and sorted(sent[1]) == ["b", "bad", "c"] and len(sent) == 2
    assert heard["a"] == "ok"
    assert all(isinstance(heard[spec], GitError) for spec in ("b", "bad", "c"))


def test_a_caller_returns_when_its_own_transfer_is_done_not_the_next_one():
    import threading

    sent: list[list[str]] = []
    gate = {1: threading.Event(), 2: threading.Event()}
    under_way = {1: threading.Event(), 2: threading.Event()}

    def send(specs: list[str]) -> None:
        sent.append(specs)
        under_way[len(sent)].set()
        assert gate[len(sent)].wait(120)  # (longer than the first caller is waited for)

    batched = exchange.Batched(send)
    first = threading.Thread(target=batched, args=("a",))
    first.start()
    assert under_way[1].wait(30)
    second = threading.Thread(target=batched, args=("b",))
    second.start()
    while len(batched._waiting) < 1:  # "b" waits for the next transfer
        threading.Event().wait(0.01)
    gate[1].set()
    assert under_way[2].wait(30)  # the next transfer is sent by its own caller …
    first.join(60)
    assert not first.is_alive()    # … while the first caller has already returned
    assert second.is_alive()
    gate[2].set()
    second.join(30)
    assert sent == [["a"], ["b"]]


def _exchange_with_base(tmp_path: Path) -> tuple[Path, Path, str, str]:
    """A repository, a bare exchange holding its HEAD as a job's base; (repo, exchange, job,
    the base commit)."""
    repo = _repo(tmp_path / "repo")
    bare = tmp_path / "exchange.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    job = exchange.job_name("plan", 1, 1)
    head = git(repo, "rev-parse", "HEAD")
    exchange.push(repo, str(bare), f"{head}:{exchange.refs_of(job)['base']}")
    return repo, bare, job, head


def _job(bare: Path, job: str, base: str, nodes: Path):
    from baton_tui.runners.dask.job import Job

    doc = {"version": 1, "goal": "g", "tasks": [{"id": 1, "title": "T", "prompt": "p",
                                                       "player": "agent"}]}
    return Job(job=job, exchange=str(bare), base=base, task=1, slug="plan",
               resource="agent", doc=doc, prompt="p", workdir=str(nodes))


def test_the_attempt_is_prepared_while_its_claim_is_pushed(tmp_path, monkeypatch):
    import threading

    from baton_tui.runners.dask.job import JobRecord

    _repo_path, bare, job, base = _exchange_with_base(tmp_path)
    prepared = threading.Event()
    seen: dict[str, object] = {}
    real_prepare, real_claim = dask_node._prepare, dask_node._claim

    def prepare(*args):
        found = real_prepare(*args)
        prepared.set()
        return found

    def claim(*args):
        # The claim's push waits here for the preparation: made one after the other, the
        # preparation would never come (and this wait would give up).
        seen["prepared first"] = prepared.wait(timeout=60)
        return real_claim(*args)

    def run_agent(job_, ready, tree, topic, node):
        seen["store"] = ready.ws.store.attempt(ready.node_attempt) is not None
        ready.ws.close()
        return JobRecord(claimed=True, node=node), None

    monkeypatch.setattr(dask_node, "_prepare", prepare)
    monkeypatch.setattr(dask_node, "_claim", claim)
    monkeypatch.setattr(dask_node, "_run_agent", run_agent)
    record = dask_node._run(_job(bare, job, base, tmp_path / "nodes"), None)
    assert record.claimed and record.error is None, record
    assert seen == {"prepared first": True, "store": True}
    assert exchange.remote_ref(tmp_path, str(bare), exchange.refs_of(job)["claim"])


def test_a_job_whose_claim_is_lost_starts_nothing_and_leaves_nothing(tmp_path, monkeypatch):
    repo, bare, job, base = _exchange_with_base(tmp_path)
    theirs = git(repo, "commit-tree", f"{base}^{{tree}}", "-p", base, "-m", "another run")
    assert exchange.claim(repo, str(bare), [(theirs, exchange.refs_of(job)["claim"])])
    closed = []
    real_prepare = dask_node._prepare

    def prepare(*args):
        found = real_prepare(*args)
        real_close = found.ws.close
        found.ws.close = lambda: (closed.append(True), real_close())
        return found

    def run_agent(*args):
        raise AssertionError("an agent was started for a job another run claimed")

    monkeypatch.setattr(dask_node, "_prepare", prepare)
    monkeypatch.setattr(dask_node, "_run_agent", run_agent)
    record = dask_node._run(_job(bare, job, base, tmp_path / "nodes"), None)
    assert not record.claimed and record.why == "another run claimed it first"
    assert closed == [True]  # the store it prepared is let go
    assert not (tmp_path / "nodes" / job).exists()
    assert exchange.remote_ref(repo, str(bare), exchange.refs_of(job)["claim"]) == theirs


def test_a_set_up_that_fails_is_said_in_the_record_of_the_claimed_attempt(tmp_path, monkeypatch):
    _repo_path, bare, job, base = _exchange_with_base(tmp_path)

    def prepare(*args):
        raise OSError("no room for the node's store")

    monkeypatch.setattr(dask_node, "_prepare", prepare)
    record = dask_node._run(_job(bare, job, base, tmp_path / "nodes"), None)
    assert record.claimed and record.error == "OSError: no room for the node's store"
    assert exchange.remote_ref(tmp_path, str(bare), exchange.refs_of(job)["record"])


def test_a_node_first_says_its_agent_s_activity_a_while_after_it_starts(tmp_path):
    import os

    activity = dask_node.Activity(_repo(tmp_path / "repo"), os.getpid())
    assert activity.due() is None  # (a plan's agents start together: nothing to say yet)
    activity.next = 0.0
    said = activity.due()
    assert said is not None and said["files"] == [] and said["cpu"] > 0


def test_a_start_pushes_its_base_while_connecting_and_takes_it_back_if_unreachable(tmp_path):
    from types import SimpleNamespace

    from baton_tui.core.errors import BatonError
    from baton_tui.runners.base import StartDeferred
    from baton_tui.runners.dask.submit import Submitter

    repo = _repo(tmp_path / "repo")
    bare = tmp_path / "exchange.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    on_exchange = lambda: git(bare, "for-each-ref", "--format=%(refname)").split()  # noqa: E731
    seen: list[list[str]] = []

    class Connecting:  # a connection on its way, that fails
        def known_unreachable(self):
            return None

        def client(self):
            seen.append(on_exchange())
            raise BatonError("scheduler tcp://127.0.0.1:9 is unreachable: refused")

    request = SimpleNamespace(task=SimpleNamespace(id=1), plan=SimpleNamespace(slug="plan"),
                              workdir=SimpleNamespace(path=repo), prompt="p", attempt_id=7)
    ws = SimpleNamespace(root=tmp_path)
    submitter = Submitter("lab", SimpleNamespace(exchange=str(bare)), Connecting(), repo)
    with pytest.raises(StartDeferred, match="unreachable"):
        submitter.submit(ws, request)
    assert len(seen) == 1 and len(seen[0]) == 1 and seen[0][0].endswith("/base")
    assert on_exchange() == []  # taken back: nothing of a job never sent stays there

    class Away:  # known to be unreachable: not even the base is pushed
        def known_unreachable(self):
            return BatonError("scheduler tcp://127.0.0.1:9 is unreachable: refused")

        def client(self):
            raise AssertionError("asked again")

    submitter = Submitter("lab", SimpleNamespace(exchange=str(bare)), Away(), repo)
    with pytest.raises(StartDeferred, match="unreachable"):
        submitter.submit(ws, request)
    assert on_exchange() == []
