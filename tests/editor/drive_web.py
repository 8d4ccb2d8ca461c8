"""`baton web` in Debian's Chromium, as a person: the whole flow (flow.py), screenshots in
light and dark. Argument: JSON {url, out, shots}; writes what it saw to `out`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).parent))
from flow import person_flow, record  # noqa: E402


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
