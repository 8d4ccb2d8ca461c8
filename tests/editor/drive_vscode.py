"""The VSIX installed in code-server (a real VS Code), driven in Debian's Chromium as a
person: open the folder, `Baton: Open` from the command palette, then the whole flow
(flow.py) inside the webview; the diff opens in VS Code's own diff editor; screenshots of the
view in the light and the dark theme. Or (`"world"` given) the run's actions on
editor_kit.actions_world's plan, where take must open an editor terminal running the agent's
interactive command and the stop at a merge conflict the conflicting file in an editor.
Argument: JSON {url, out, shots, world?}."""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).parent))
from flow import actions_flow, person_flow, record, wait_for  # noqa: E402


def open_baton(page) -> None:
    """F1 → `Baton: Open`: retried, since the palette lists only commands known when it opens."""
    page.locator(".statusbar-item", has_text="Baton").first.wait_for(timeout=180_000)
    for _ in range(12):
        page.keyboard.press("F1")
        box = page.locator(".quick-input-widget input")
        box.wait_for(timeout=10_000)
        box.fill(">Baton: Open")
        row = page.locator(".quick-input-list .monaco-list-row", has_text="Baton: Open")
        try:
            row.first.wait_for(timeout=5_000)
        except Exception:  # noqa: BLE001 — not listed yet: close and ask again
            page.keyboard.press("Escape")
            continue
        box.press("Enter")
        return
    raise AssertionError("the command palette never listed Baton: Open")


def terminal_of(page, task: int) -> str:
    """The editor terminal take opened: its name in the panel, and what the interactive
    command printed in it."""
    name = f"Baton: task {task}"
    panel = page.locator(".part.panel")
    wait_for(f"the terminal {name}", lambda: panel.is_visible() and name in panel.inner_text(), 120)
    rows = page.locator(".part.panel .xterm-rows")
    wait_for("the interactive session's words", lambda: rows.count() > 0
             and "type a line" in rows.first.inner_text(), 120)
    return f"{name}\n" + rows.first.inner_text().replace("\n", "")  # (a long path wraps)


def editor_of(page, path: str) -> str:
    """The editor the stop at a conflict opened: its tab and the file's first line."""
    tab = page.locator(".tabs-container .tab.active", has_text=Path(path).name)
    tab.first.wait_for(timeout=60_000)
    lines = page.locator(".editor-group-container.active .view-lines")
    wait_for("the file's text", lambda: lines.count() > 0 and lines.first.inner_text().strip(), 60)
    text = lines.first.inner_text().replace("\xa0", " ")  # the editor draws spaces as no-break ones
    return f"{tab.first.get_attribute('aria-label') or tab.first.inner_text()}\n{text}"


def main() -> int:
    args = json.loads(sys.argv[1])
    seen: dict = {}
    shots = Path(args["shots"]) if args.get("shots") else None
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                    args=["--disable-gpu", "--disable-dev-shm-usage"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        try:
            page.goto(args["url"])
            open_baton(page)
            view = page.frame_locator("iframe.webview.ready").frame_locator("iframe#active-frame")
            view.get_by_placeholder(re.compile("goal")).wait_for(timeout=60_000)
            seen["opened"] = True

            def shoot(name: str) -> None:
                if shots:
                    page.screenshot(path=str(shots / f"vscode-{name}-light.png"))

            def open_diff(path: str) -> str:
                tab = page.locator(".tab", has_text=Path(path).name)
                tab.first.wait_for(timeout=30_000)
                page.locator(".monaco-diff-editor").first.wait_for(timeout=30_000)
                return tab.first.inner_text()

            if args.get("world"):
                actions_flow(view, seen, args["world"], lambda task: terminal_of(page, task),
                             lambda path: editor_of(page, path))
                seen["ok"] = True
                return 0
            person_flow(view, seen, shoot, open_diff)
            if shots:
                page.keyboard.press("F1")
                box = page.locator(".quick-input-widget input")
                box.fill(">Toggle between Light/Dark Themes")
                page.locator(".quick-input-list .monaco-list-row",
                             has_text="Toggle between Light/Dark").first.wait_for(timeout=10_000)
                box.press("Enter")
                wait_for("the dark theme", lambda: page.evaluate(
                    "!!document.querySelector('.monaco-workbench.vs-dark')"), 30)
                time.sleep(1)  # the webview repaints with the new theme's variables
                page.screenshot(path=str(shots / "vscode-after-merge-dark.png"))
            seen["ok"] = True
        finally:
            def webview_messages():
                view = page.frame_locator("iframe.webview.ready").frame_locator("iframe#active-frame")
                return view.locator(".msg").all_inner_texts()

            record(args["out"], seen, webview_messages,
                   (lambda: page.screenshot(path=str(shots / "vscode-failed.png"))) if shots else None)
            browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
