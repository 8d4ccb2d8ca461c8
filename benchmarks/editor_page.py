"""The page side of bench_editor.py, on the editor tool chain's Python (Playwright): first
paint of the plan in `baton web`, and key press → edited row painted. Argument: JSON {url,
tasks, runs, out}. (ECHO_PAGE, the minimal echo page to compare against, does not finish in
headless Chromium yet: not run.)"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

ROUND_TRIP = """([task, runs]) => new Promise((resolve) => {
  const list = document.getElementById('plan-list');
  const times = [];
  let t0 = 0, want = null;
  const observer = new MutationObserver(() => {
    const row = document.getElementById('task-' + task);
    if (want === null || !row) return;
    const has = row.textContent.includes('checkpoint');
    if (has !== want) return;
    want = null;
    requestAnimationFrame(() => {
      times.push(performance.now() - t0);
      if (times.length >= runs) { observer.disconnect(); resolve(times); } else setTimeout(press, 20);
    });
  });
  observer.observe(list, { childList: true, subtree: true, characterData: true });
  setTimeout(() => { if (times.length < runs) resolve(times.length ? times : [Infinity]); }, 240000);
  function press() {
    const row = document.getElementById('task-' + task);
    want = !row.textContent.includes('checkpoint');
    t0 = performance.now();
    list.dispatchEvent(new KeyboardEvent('keydown', { key: 'C', bubbles: true }));
  }
  press();
})"""

ECHO_PAGE = """([url, runs]) => new Promise((resolve) => {
  document.body.innerHTML = '<span id="out"></span>';
  const out = document.getElementById('out');
  const socket = new WebSocket(url);
  const times = [];
  let t0 = 0, n = 0;
  socket.onmessage = (e) => {
    out.textContent = e.data;
    requestAnimationFrame(() => {
      times.push(performance.now() - t0);
      if (times.length >= runs) { socket.close(); resolve(times); } else setTimeout(press, 20);
    });
  };
  function press() { t0 = performance.now(); socket.send(JSON.stringify({ key: 'C', n: n++ })); }
  socket.onopen = press;
})"""


def main() -> int:
    args = json.loads(sys.argv[1])
    result: dict = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                    args=["--disable-gpu", "--disable-dev-shm-usage"])
        try:
            page = browser.new_page(viewport={"width": 900, "height": 1000}, bypass_csp=True)
            page.goto(args["url"])
            page.wait_for_function(
                f"document.querySelectorAll('#plan-list [data-task]').length === {args['tasks']}",
                timeout=120_000, polling="raf")
            result["first_paint_ms"] = page.evaluate("performance.now()")
            page.locator("#plan-list").focus()
            task = args["tasks"] // 2
            page.evaluate(f"batonApp.dispatch({{type: 'select', id: {task}}})")
            page.wait_for_function(f"document.getElementById('task-{task}').getAttribute('aria-selected') === 'true'")
            result["key_to_paint_ms"] = page.evaluate(ROUND_TRIP, [task, args["runs"]])
        finally:
            Path(args["out"]).write_text(json.dumps(result))
            browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
