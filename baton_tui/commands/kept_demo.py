"""A sample kept by `baton demo --tui` runs only inside the demo: its run lives on the demo's
own home (`DIR/baton-home`) and asks the demo's scripted model, which stops with the app.
From a plain shell its tasks would look for their worktrees in another home and ask a model
that is not there (or, with a key set, a real one) — so `run`, `resume` and `retry` there
say which command continues it instead. Light on purpose: `baton run` imports it."""

from __future__ import annotations

import json
import os
from pathlib import Path

from baton_tui import api
from baton_tui.core.errors import BatonError

MARK = "demo.json"  # in the sample's state folder: its demo's home and folder


def mark_kept(repo: Path, home: Path, base: Path) -> None:
    """Record in the sample's own state that its run belongs to the demo."""
    ws = api.open_workspace(repo)
    try:
        mark = ws.paths.state_dir / MARK
        mark.parent.mkdir(parents=True, exist_ok=True)
        mark.write_text(json.dumps({"home": str(home), "dir": str(base)}))
    finally:
        ws.close()


def refuse_outside_the_demo(ws: api.Workspace) -> None:
    """One line (exit 2) when `ws` is a kept demo's sample and this is not its demo."""
    try:
        mark = json.loads((ws.paths.state_dir / MARK).read_text())
    except (OSError, ValueError):
        return
    if os.environ.get("BATON_HOME") != mark.get("home"):
        raise BatonError("this is a sample kept by `baton demo --tui`: its run needs the "
                         "demo's scripted model and home — `baton demo --tui --dir "
                         f"{mark.get('dir')}` continues it")
