"""The layers hold: front ends reach the engine only through the façade (`baton_tui/api.py`),
and the engine never imports a front end — the import-linter contracts in pyproject.toml."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_import_linter_contracts_are_kept():
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert lint, "import-linter is part of the test extras (pip install -e '.[test]')"
    result = subprocess.run([lint, "--no-cache"], cwd=ROOT, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_no_sql_outside_the_store():
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "baton_tui").rglob("*.py")
                 if p.parent.name != "store" and ".execute(" in p.read_text()]
    assert offenders == []
