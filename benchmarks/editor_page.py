"""The page side of bench_editor.py, on the editor tool chain's Python (Playwright).

In `baton web`: first paint of the plan; key press (`C` in the plan list: the selected
task's checkpoint flag, `task/edit` through the protocol) → the edited row painted, and → the
server's answer applied, with nothing running; then Approve and Run as a person does, and once
8 agents stream output into their cards, the same key presses again. Then the minimal echo
page (served by the echo process itself): key press → a WebSocket message to that local
process → its echo painted. Argument: JSON {url, echo, tasks, runs, streams, out}.

Both pages are loaded over http://127.0.0.1 and talk to their own origin. (An echo page opened
as about:blank and connecting to ws://127.0.0.1 is refused by Chromium's local-network-access
checks, `net::ERR_BLOCKED_BY_LOCAL_NETWORK_ACCESS_CHECKS`, and a page that waits only for
`onmessage` then never finishes: both round trips here fail on an error or a close.)
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

# Each key press: t0 at its dispatch; "painted" at the frame after the first mutation that shows
# the edited row (the view paints an edit at once); "confirmed" at the frame after the server's
# answer to it was applied (`batonApp.editsSettled`), before the next press. The echo page's
# round trip is the same "painted" through its local process. A closed socket or a minute
# without the result rejects instead of waiting forever.
ROUND_TRIP = """([task, runs]) => new Promise((resolve, reject) => {
  const list = document.getElementById('plan-list');
  const painted = [], confirmed = [];
  let t0 = 0, want = null, settled = 0, limit = 0;
  const observer = new MutationObserver(() => {
    const row = document.getElementById('task-' + task);
    if (want === null || !row) return;
    if (row.textContent.includes('checkpoint') !== want) return;
    want = null;
    requestAnimationFrame(() => painted.push(performance.now() - t0));
  });
  observer.observe(list, { childList: true, subtree: true, characterData: true });
  function answered() {
    if (batonApp.editsSettled > settled && want === null && painted.length > confirmed.length) {
      confirmed.push(performance.now() - t0);
      if (confirmed.length >= runs) { observer.disconnect(); resolve({ painted, confirmed }); }
      else setTimeout(press, 20);
    } else if (performance.now() > limit) {
      observer.disconnect();
      reject(new Error('no answer to the edit in 60 s'));
    } else requestAnimationFrame(answered);
  }
  function press() {
    const row = document.getElementById('task-' + task);
    want = !row.textContent.includes('checkpoint');
    settled = batonApp.editsSettled;
    t0 = performance.now();
    limit = t0 + 60000;
    list.dispatchEvent(new KeyboardEvent('keydown', { key: 'C', bubbles: true }));
    requestAnimationFrame(answered);
  }
  press();
})"""

ECHO_ROUND_TRIP = """(runs) => new Promise((resolve, reject) => {
  const out = document.getElementById('out');
  const input = document.getElementById('keys');
  const socket = new WebSocket(`ws://${location.host}/ws`);
  const times = [];
  let t0 = 0, n = 0, want = null, guard = 0;
  socket.onerror = () => reject(new Error('the echo socket failed'));
  socket.onclose = (e) => {
    if (times.length < runs) reject(new Error('the echo socket closed: ' + e.code));
  };
  socket.onmessage = (e) => { out.textContent = e.data; };
  input.addEventListener('keydown', (e) => socket.send(JSON.stringify({ key: e.key, n: n++ })));
  const observer = new MutationObserver(() => {
    if (want === null || !out.textContent.includes(want)) return;
    want = null;
    clearTimeout(guard);
    requestAnimationFrame(() => {
      times.push(performance.now() - t0);
      if (times.length >= runs) { observer.disconnect(); socket.close(); resolve(times); }
      else setTimeout(press, 20);
    });
  });
  observer.observe(out, { childList: true, subtree: true, characterData: true });
  function press() {
    want = `"n":${n}}`;
    guard = setTimeout(() => reject(new Error('no echo in 60 s')), 60000);
    t0 = performance.now();
    input.dispatchEvent(new KeyboardEvent('keydown', { key: 'C', bubbles: true }));
  }
  socket.onopen = press;
})"""


def confirm(page, opener: str, yes: str) -> None:
    page.get_by_role("button", name=re.compile(opener)).click()
    page.locator("#confirm").get_by_role("button", name=re.compile(yes)).click()


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
            task = args["tasks"] // 2
            page.evaluate(f"batonApp.dispatch({{type: 'select', id: {task}}})")
            page.wait_for_function(
                f"document.getElementById('task-{task}').getAttribute('aria-selected') === 'true'")
            result["idle"] = page.evaluate(ROUND_TRIP, [task, args["runs"]])

            streams = args["streams"]
            confirm(page, "^Approve…", "^Approve")
            page.wait_for_function("!document.getElementById('run').disabled", timeout=120_000)
            confirm(page, "^Run…", "^Yes")
            # every streaming agent running, and each card showing its output
            page.wait_for_function(
                "document.querySelectorAll('#cards [data-state=running] pre.output').length"
                f" === {streams}",
                timeout=300_000)
            start = page.evaluate("document.querySelectorAll('#cards pre.output').length")
            result["streaming_cards"] = start
            time.sleep(1)
            result["streaming"] = page.evaluate(ROUND_TRIP, [task, args["runs"]])
            result["still_streaming"] = page.evaluate(
                "document.querySelectorAll('#cards [data-state=running]').length")

            echo = browser.new_page(viewport={"width": 900, "height": 1000})
            echo.goto(args["echo"])
            result["echo_ms"] = echo.evaluate(ECHO_ROUND_TRIP, args["runs"])
            echo.close()
            confirm(page, "^Pause", "^Yes, pause")
        finally:
            Path(args["out"]).write_text(json.dumps(result))
            browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
