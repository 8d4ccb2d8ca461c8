"""`[runners]`: where tasks run besides this machine (the cluster runners' tables).

```toml
[runners]
default = "lab"                        # the runner of new tasks (default "local")

[runners.lab]
kind = "dask"
address = "tcp://127.0.0.1:8786"       # the Dask scheduler
exchange = "/srv/git/project.git"      # a git remote every node can fetch from and push to
workdir = "/var/tmp/baton"             # optional: scratch checkouts on the workers
resources = { claude-code = "claude" } # optional: player -> the Dask resource it asks for
max_parallel = 8                       # optional: at most this many of its tasks at once
```

`local` (this machine) is built in: it is no table, and the names `default` and `local` are
reserved. A runner from a repository's `baton.toml` is used (and contacted: Dask's wire
protocol carries pickles, so a scheduler is as trusted as a command) only once the person
trusts that file (`baton trust`). Standard library and pydantic only: `distributed` is
imported where a Dask runner is used, never here.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from baton_tui.core.words import LOCAL_RUNNER
from baton_tui.pydantic_plugins import skip_discovery

skip_discovery()  # before the models below (see pydantic_plugins)
LOCAL = LOCAL_RUNNER
RESERVED_RUNNER_KEYS = ("default", LOCAL)
NAME = re.compile(r"[a-z0-9][a-z0-9_.-]{0,62}")
_ADDRESS = re.compile(r"(tcp|tls|ws|wss)://[^\s/?#]+:\d{1,5}")
_RESOURCE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class RunnerSettings(_Strict):
    """`[runners.NAME]`: one cluster runner."""

    kind: Literal["dask"]
    """The engine: `dask` (Dask distributed: a scheduler and its workers)."""
    address: str = Field(min_length=1, max_length=500)
    """The scheduler, `tcp://HOST:PORT` (or `tls://`, `ws://`, `wss://`)."""
    exchange: str = Field(min_length=1, max_length=2000)
    """A git remote (a path or URL) this machine and every worker can fetch from and push to."""
    workdir: str | None = Field(default=None, max_length=2000)
    """Where a worker makes its scratch checkouts (default: its temporary directory)."""
    resources: dict[str, str] = Field(default_factory=dict)
    """Player -> the name of the Dask resource its tasks ask one unit of (default: the
    player's own name)."""
    max_parallel: int | None = Field(default=None, ge=1, le=10_000)
    """At most this many of its tasks at once (default: only `[limits] max_parallel`)."""

    @field_validator("address")
    @classmethod
    def _address(cls, value: str) -> str:
        if not _ADDRESS.fullmatch(value):
            raise ValueError(f"address {value!r} must look like tcp://HOST:PORT (the Dask "
                             "scheduler)")
        return value

    @field_validator("exchange")
    @classmethod
    def _exchange(cls, value: str) -> str:
        # Handed to git as a remote: never an option, never a remote helper that runs a
        # command (`ext::sh -c …`), never a control character.
        if value.startswith("-") or "::" in value or any(ord(c) < 32 or c == "\x7f"
                                                         for c in value):
            raise ValueError(f"exchange {value!r} must be a path or a URL of a git remote")
        return value

    @field_validator("resources")
    @classmethod
    def _resources(cls, value: dict[str, str]) -> dict[str, str]:
        for player, resource in value.items():
            if not _RESOURCE.fullmatch(resource):
                raise ValueError(f"resource {resource!r} for {player!r}: use letters, digits, "
                                 "-_.")
        return value

    def resource_of(self, player: str) -> str:
        """The Dask resource a task on `player` asks one unit of."""
        return self.resources.get(player, player)


class RunnersConfig(BaseModel):
    """`[runners]`: the default runner of new tasks and the cluster runners by name (each
    other key is a `[runners.NAME]` table, validated as `RunnerSettings`: an error names it
    as `runners.NAME.key`)."""

    model_config = ConfigDict(extra="allow", strict=True)
    __pydantic_extra__: dict[str, RunnerSettings] = Field(init=False)  # type: ignore[assignment]

    default: str = LOCAL
    """The runner new tasks get (`local`: this machine)."""

    @model_validator(mode="before")
    @classmethod
    def _names(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for key in data:
                if key == LOCAL:
                    raise ValueError("runner 'local' is this machine: it has no table")
                if key != "default" and not (isinstance(key, str) and NAME.fullmatch(key)):
                    raise ValueError(f"runner name {key!r}: use lowercase letters, digits, -_.")
        return data

    @model_validator(mode="after")
    def _default_known(self) -> "RunnersConfig":
        if self.default != LOCAL and self.default not in self.named:
            raise ValueError(f"default runner {self.default!r} has no [runners.{self.default}] "
                             "table")
        return self

    @property
    def named(self) -> dict[str, RunnerSettings]:
        """The cluster runners by name."""
        return dict(self.__pydantic_extra__ or {})

    def names(self) -> list[str]:
        """Every runner a task may name, `local` first."""
        return [LOCAL, *sorted(self.named)]

    def get(self, name: str) -> RunnerSettings | None:
        return self.named.get(name)


def project_runner_keys(project: dict[str, Any], personal: dict[str, Any]) -> list[str]:
    """`runners.NAME` for each runner table the repository's file sets and the personal
    config does not: contacting its scheduler and pushing to its exchange wait for trust."""
    proj = project.get("runners") if isinstance(project.get("runners"), dict) else {}
    pers = personal.get("runners") if isinstance(personal.get("runners"), dict) else {}
    return [f"runners.{name}" for name, table in (proj or {}).items()
            if isinstance(table, dict) and name not in (pers or {})]
