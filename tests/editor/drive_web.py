"""`baton web` in Debian's Chromium, as a person: the whole flow (flow.py), screenshots in
light and dark; or (`"world"` given) the run's actions on editor_kit.actions_world's plan.
Argument: JSON {url, out, shots, world?}; writes what it saw to `out`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).parent))
from flow import actions_flow, person_flow, record, wait_for  # noqa: E402


def shown(page, title: str) -> str:
    """What the page's viewer shows under `title` (a browser has no terminal or editor: it
    shows the take-over command, or names the file to open)."""
    viewer = page.locator("#viewer")
    wait_for(title, lambda: viewer.is_visible() and title in viewer.locator("h2").inner_text(), 60)
    return viewer.inner_text()


def main() -> int:
    args = json.loads(sys.argv[1])
    seen: dict = {}
    shots = Path(args["shots"]) if args.get("shots") else None
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                    args=["--disable-gpu", "--disable-dev-shm-usage"])
        try:
            page = browser.new_page(viewport={"width": 900, "height": 1000})
            page.route("http://**", lambda route: route.continue_() if "127.0.0.1" in route.request.url
                       else route.abort())
            page.goto(args["url"] + "&theme=light")

            def shoot(name: str) -> None:
                if shots:
                    page.screenshot(path=str(shots / f"web-{name}-light.png"))

            def open_diff(path: str) -> str:
                viewer = page.locator("#viewer")
                viewer.get_by_text(path).first.wait_for()
                return viewer.locator("pre").inner_text()

            if args.get("world"):
                actions_flow(page, seen, args["world"], lambda task: shown(page, f"Take task {task}"),
                             lambda path: shown(page, f"Open {path}"))
                seen["ok"] = True
                return 0
            person_flow(page, seen, shoot, open_diff)
            if shots:
                page.goto(args["url"] + "&theme=dark")
                page.locator("#plan-list [data-task]").first.wait_for()
                page.screenshot(path=str(shots / "web-after-merge-dark.png"))
            seen["ok"] = True
        finally:
            record(args["out"], seen, lambda: page.locator(".msg").all_inner_texts(),
                   (lambda: page.screenshot(path=str(shots / "web-failed.png"))) if shots else None)
            browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
