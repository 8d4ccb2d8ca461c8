"""The wheel's build hook: writes the commit the wheel is built from into it as
`baton_tui/_commit`, which `baton --version` prints (baton_tui/version.py). Not for an
editable install (that reads the checkout's `.git` itself), nor outside a git checkout."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


def built_from(root: str) -> str:
    """HEAD's commit (12 hex digits, `-dirty` when tracked files have changes), or ''."""
    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", "-C", root, *args], capture_output=True, text=True,
                                  timeout=30).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""

    if git("rev-parse", "--show-toplevel") != os.path.realpath(root):
        return ""
    head = git("rev-parse", "--short=12", "HEAD")
    if not head:
        return ""
    dirty = git("status", "--porcelain", "--untracked-files=no")
    return head + ("-dirty" if dirty else "")


class CommitHook(BuildHookInterface):
    PLUGIN_NAME = "custom"
    _folder = ""

    def initialize(self, version: str, build_data: dict) -> None:
        if self.target_name != "wheel" or version == "editable":
            return
        found = built_from(self.root)
        if not found:
            return
        folder = self._folder = tempfile.mkdtemp(prefix="baton-build-")
        path = os.path.join(folder, "_commit")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(found + "\n")
        build_data["force_include"][path] = "baton_tui/_commit"

    def finalize(self, version: str, build_data: dict, artifact_path: str) -> None:
        if self._folder:
            shutil.rmtree(self._folder, ignore_errors=True)
