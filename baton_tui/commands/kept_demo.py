"""A sample kept by `baton demo --tui` runs only on its demo's own home (`DIR/baton-home`)
and the demo's scripted model, which stops with the app. So a plain `baton run`, `resume`
or `retry` in the sample brings both along, the way `baton demo --tui --dir DIR` does: the
model is served by the command itself, which therefore stays in the foreground until the
run ends or is paused. Light on purpose: `baton run` imports it."""

from __future__ import annotations

import json
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

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


def kept_demo() -> dict | None:
    """The demo (its `home` and `dir`) whose sample this folder is, when run from outside
    that demo; None anywhere else, and inside the demo itself."""
    try:
        mark = json.loads((api.state_dir() / MARK).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(mark, dict) or not mark.get("home"):
        return None
    from baton_tui.demo.session import inside_demo  # lazy: only a kept sample needs it

    return None if inside_demo(mark["home"]) else mark


@contextmanager
def on_the_demos_model(detach: bool = False) -> Iterator[bool]:
    """Run the block on the kept demo's home and scripted model when this folder is one's
    sample (yielding True), else as it is (False). Its model lives only as long as this
    command, so `--detach` there is refused with the commands that do continue it."""
    mark = kept_demo()
    if mark is None:
        yield False
        return
    if detach:
        raise BatonError("this is a sample kept by `baton demo --tui`: its run needs the demo's "
                         "scripted model, which lives only as long as the command — run "
                         f"`baton resume` here without --detach, or `baton demo --tui --dir "
                         f"{mark.get('dir')}`")
    from baton_tui.demo.session import demo_model  # lazy: the server, for a kept sample only

    print(f"baton: a sample kept by `baton demo --tui`: running on the demo's home "
          f"({mark['home']}) and its scripted model, which stop with this command (Ctrl-C "
          "pauses the run; `baton resume` continues it)", file=sys.stderr, flush=True)
    with demo_model(Path(mark["home"])):
        yield True
