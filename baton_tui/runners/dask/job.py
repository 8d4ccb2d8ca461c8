"""What travels between the conductor and a node: the job it sends, the record it gets back,
and the messages a running job says on its topic — typed, versioned, and checked on arrival.

A `Job` goes out with `to_wire()` (a plain dict: Dask pickles it, the store keeps a copy of
it as the attempt's `payload`) and is read on the node with `Job.from_wire`; a `JobRecord`
comes back the same way — as `record.json` on the exchange (sealed over its wire form, see
`exchange.seal`) and as the job's answer. Each carries its format's version (`v`): a node
refuses a job of another version in one line (as it refuses another Baton), and a record of
another version is not read as if it were this one's. A wire dict without a version was
written before versions were: version 1 (a job of version 1 had the node compose the agent's
brief from the task, its dependencies' reports and feedback; it is refused).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypedDict

from baton_tui.runners.homecoming import Ran, RemoteEvent

JOB_WIRE = 2     # 1: the untyped dict of before, the node composing the agent's brief itself
RECORD_WIRE = 1  # (an unversioned record is one: the same fields)


class WireError(ValueError):
    """A job or record that is not one this version reads (said in one line)."""


def _version(wire: Mapping[str, object], what: str, current: int) -> None:
    found = wire.get("v", 1)
    if found != current:
        raise WireError(f"a {what} of wire version {found!r}, not {current}: the person's "
                        "machine and the worker run different Baton versions")


def _str(wire: Mapping[str, object], key: str) -> str | None:
    value = wire.get(key)
    return value if isinstance(value, str) else None


def _int(wire: Mapping[str, object], key: str) -> int | None:
    value = wire.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _dict(wire: Mapping[str, object], key: str) -> dict[str, Any] | None:
    value = wire.get(key)
    return dict(value) if isinstance(value, dict) else None


def _required(wire: Mapping[str, object], key: str, what: str) -> str:
    value = wire.get(key)
    if not isinstance(value, str) or not value:
        raise WireError(f"a {what} without its {key!r}")
    return value


@dataclass(frozen=True)
class Job:
    """One attempt, as the conductor sends it to a node: the plan, the task, every word of
    the agent's brief as the conductor composed it, and what it decided for the start (a
    session to continue) — never the person's environment, keys or tokens.

    The node always removes its scratch checkout once the result and record are on the
    exchange (or came back with the answer): there is no "keep it" switch (the old `keep`
    key was read by the node and never written by any conductor)."""

    job: str                       # its Dask key and its folder of refs on the exchange
    exchange: str                  # the git remote both sides reach
    base: str                      # the commit the attempt starts from
    task: int
    slug: str
    resource: str                  # the Dask resource it asks one unit of
    doc: dict[str, Any] | None     # the plan's document (None in the store's copy)
    prompt: str = ""               # the agent's brief, composed by the conductor
    workdir: str | None = None     # where the node makes its scratch checkouts
    resume_message: str | None = None
    session_id: str | None = None
    trusted: str | None = None     # the hash of the baton.toml the person trusted
    versions: dict[str, str] = field(default_factory=dict)  # Baton's and Python's, here
    seal: str | None = None        # the attempt's secret (`exchange.seal`); None in the store

    def to_wire(self) -> dict[str, Any]:
        return {"v": JOB_WIRE, "job": self.job, "exchange": self.exchange, "base": self.base,
                "task": self.task, "slug": self.slug, "resource": self.resource,
                "doc": self.doc, "prompt": self.prompt, "workdir": self.workdir,
                "resume_message": self.resume_message,
                "session_id": self.session_id, "trusted": self.trusted,
                "versions": dict(self.versions), "seal": self.seal}

    @classmethod
    def from_wire(cls, wire: Mapping[str, object]) -> Job:
        _version(wire, "job", JOB_WIRE)
        task = _int(wire, "task")
        if task is None:
            raise WireError("a job without its task")
        versions = _dict(wire, "versions") or {}
        return cls(job=_required(wire, "job", "job"), exchange=_required(wire, "exchange", "job"),
                   base=_required(wire, "base", "job"), task=task,
                   slug=_str(wire, "slug") or "plan",
                   resource=_str(wire, "resource") or "", doc=_dict(wire, "doc"),
                   prompt=_str(wire, "prompt") or "", workdir=_str(wire, "workdir"),
                   resume_message=_str(wire, "resume_message"),
                   session_id=_str(wire, "session_id"), trusted=_str(wire, "trusted"),
                   versions={str(k): str(v) for k, v in versions.items()},
                   seal=_str(wire, "seal"))


@dataclass(frozen=True)
class JobRecord:
    """What a node says of a job it was given: it ran nothing (`claimed` false, and `why`),
    or its agent ran (`attempt`, `events`, the `head`/`result` commits), or its set-up failed
    (`error`). A record whose push to the exchange failed comes back with the answer instead,
    carrying a git `bundle` of its refs (`unpushed`: why), or says where it is `kept`."""

    claimed: bool
    node: str | None
    why: str | None = None
    error: str | None = None
    attempt: Ran = field(default_factory=Ran)
    events: tuple[RemoteEvent, ...] = ()
    head: str | None = None
    result: str | None = None
    seal: str | None = None
    unpushed: str | None = None
    bundle: bytes | None = None      # (with the answer only: never in record.json)
    bundle_error: str | None = None
    kept: str | None = None

    def to_wire(self) -> dict[str, Any]:
        """The record as its node writes and seals it (`bundle`, bytes, only in an answer)."""
        wire: dict[str, Any] = {"v": RECORD_WIRE, "claimed": self.claimed, "node": self.node}
        if not self.claimed:
            wire["why"] = self.why
            return wire
        wire.update({"attempt": self.attempt.to_wire(),
                     "events": [e.to_wire() for e in self.events],
                     "head": self.head, "result": self.result})
        for key in ("error", "seal", "unpushed", "bundle", "bundle_error", "kept"):
            if getattr(self, key) is not None:
                wire[key] = getattr(self, key)
        return wire

    @classmethod
    def from_wire(cls, wire: Mapping[str, object]) -> JobRecord:
        _version(wire, "record", RECORD_WIRE)
        ran = _dict(wire, "attempt")
        events = wire.get("events")
        bundle = wire.get("bundle")
        return cls(claimed=bool(wire.get("claimed", True)), node=_str(wire, "node"),
                   why=_str(wire, "why"), error=_str(wire, "error"),
                   attempt=Ran.from_wire(ran) if ran is not None else Ran(),
                   events=tuple(RemoteEvent.from_wire(e) for e in events if isinstance(e, dict))
                   if isinstance(events, list) else (),
                   head=_str(wire, "head"), result=_str(wire, "result"),
                   seal=_str(wire, "seal"), unpushed=_str(wire, "unpushed"),
                   bundle=bundle if isinstance(bundle, bytes) else None,
                   bundle_error=_str(wire, "bundle_error"), kept=_str(wire, "kept"))


class Heard(TypedDict, total=False):
    """One message a running job says on its topic (a Dask worker event), each key optional:
    the node that claimed it; a piece of its output (`text`, ending at byte `at`); a progress
    report (`progress`, the node's event id `event`); the agent's changed files, each with its
    size and modification time (`files`), and its process tree's CPU seconds (`cpu`), every
    few seconds; `done` once its record is pushed."""

    node: str
    claimed: bool
    text: str
    at: int
    progress: str
    event: int
    files: list[tuple[str, int, int]]
    cpu: float
    done: bool
