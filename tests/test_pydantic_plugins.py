"""Baton's models are built without pydantic's plugin discovery (`baton_tui.pydantic_plugins`):
no `importlib.metadata` scan in a command or a conductor, the models validating as before, and
a process that loaded pydantic's own loader first keeps it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

# Everything a run's conductor imports, then a plan and a config validated, good and bad.
VALIDATE = """
import json, sys
{first}
import baton_tui.run.conductor, baton_tui.players.registry
from baton_tui.config import _validate
from baton_tui.core.errors import BatonError
from baton_tui.plan.model import parse_document

doc = parse_document({{"version": 1, "goal": "g", "tasks": [{{"id": 1, "title": "a", "prompt": "p",
                                             "player": "codex"}}]}})
errors = []
for bad in ({{"goal": "g", "tasks": [{{"id": "x"}}]}},):
    try:
        parse_document(bad)
    except BatonError as exc:
        errors.append(exc.args[0])
try:
    _validate({{"limits": {{"max_parallel": "many"}}}}, "baton.toml")
except BatonError as exc:
    errors.append(exc.args[0])
loader = sys.modules["pydantic.plugin._loader"]
print(json.dumps({{"titles": [t.title for t in doc.tasks],
                  "parallel": _validate({{"limits": {{"max_parallel": 3}}}}, "c").limits.max_parallel,
                  "errors": errors,
                  "metadata": "importlib.metadata" in sys.modules,
                  "real_loader": hasattr(loader, "entry_points")}}))
"""


def validated(first: str = "") -> dict:
    out = subprocess.run([sys.executable, "-c", VALIDATE.format(first=first)], text=True,
                         capture_output=True, timeout=120, env=os.environ.copy())
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_a_conductor_validates_plans_and_configs_without_scanning_installed_packages():
    seen = validated()
    assert seen["metadata"] is False  # no distribution scanned for plugins
    assert seen["real_loader"] is False
    assert seen["titles"] == ["a"] and seen["parallel"] == 3
    assert len(seen["errors"]) == 2
    assert seen["errors"][0].startswith("plan: ")
    assert seen["errors"][1].startswith("baton.toml: ") and "max_parallel" in seen["errors"][1]


def test_a_process_that_loaded_pydantics_plugin_loader_first_keeps_it():
    seen = validated("import pydantic.plugin._loader")
    assert seen["real_loader"] is True and seen["metadata"] is True
    assert seen["titles"] == ["a"] and seen["parallel"] == 3 and len(seen["errors"]) == 2
