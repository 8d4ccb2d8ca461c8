"""The demo's scripted model server, and this process's environment pointed at it.

Every way in to a demo — `baton demo`, `baton demo --tui`, a plain `baton resume` in a kept
sample — needs the same thing for as long as it runs: the server on 127.0.0.1, Baton's
native `anthropic` route aimed at it with a dummy key, the demo's own home, and no HTTP
proxy between them. Children (the conductor, the agents) inherit it; it is all put back after.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator

if TYPE_CHECKING:
    from baton_tui.demo.sample import DemoModelServer

DEMO_KEY = "demo-key"  # the dummy key: also how a command knows it runs inside a demo
_NAMES = ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "NO_PROXY", "no_proxy", "BATON_HOME",
          "BATON_PLANNER")


@contextmanager
def demo_model(home: Path, start: "Callable[[], DemoModelServer] | None" = None
               ) -> Iterator["DemoModelServer"]:
    """The scripted model (`start`, by default the app demo's, which also plans) and the
    environment of a demo whose run lives on `home`, while the block runs."""
    if start is None:
        from baton_tui.demo.tui_demo import start_server  # lazy: the server's code

        start = start_server
    saved = {name: os.environ.get(name) for name in _NAMES}
    server = start()
    try:
        os.environ.update({"BATON_HOME": str(home), "BATON_PLANNER": "anthropic",
                           "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": DEMO_KEY})
        for name in ("NO_PROXY", "no_proxy"):  # a person's HTTP proxy must not see the model
            os.environ[name] = ",".join(x for x in (saved[name], "127.0.0.1", "localhost") if x)
        yield server
    finally:
        server.stop()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def inside_demo(home: str | None) -> bool:
    """True when this process already runs inside the demo whose run lives on `home`."""
    here = os.environ.get("BATON_HOME")
    return bool(home and here and os.environ.get("ANTHROPIC_API_KEY") == DEMO_KEY
                and Path(here).resolve() == Path(home).resolve())
