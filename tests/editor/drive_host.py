"""Opens code-server with the extension under development and its mocha tests
(extensionDevelopmentPath + extensionTestsPath, the smoke-test driver on), and waits for the
workbench to report the run's exit code through `codeAutomationExit`.
Argument: JSON {port, folder, extension, out}; writes {exit} to `out`."""

from __future__ import annotations

import json
import sys
import time
import urllib.parse
from pathlib import Path

from playwright.sync_api import sync_playwright


def main() -> int:
    args = json.loads(sys.argv[1])
    port, ext = args["port"], args["extension"]
    remote = f"vscode-remote://127.0.0.1:{port}"
    payload = [["extensionDevelopmentPath", f"{remote}{ext}"],
               ["extensionTestsPath", f"{remote}{ext}/out/test/index.js"]]
    url = (f"http://127.0.0.1:{port}/?folder={urllib.parse.quote(args['folder'])}"
           f"&payload={urllib.parse.quote(json.dumps(payload))}")
    result: dict = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                    args=["--disable-gpu", "--disable-dev-shm-usage"])
        try:
            page = browser.new_page()
            page.expose_function("codeAutomationExit", lambda code, *rest: result.setdefault("exit", code))
            page.goto(url)
            deadline = time.monotonic() + args.get("timeout", 600)
            while "exit" not in result and time.monotonic() < deadline:
                page.wait_for_timeout(500)
        finally:
            Path(args["out"]).write_text(json.dumps(result))
            browser.close()
    return 0 if "exit" in result else 1


if __name__ == "__main__":
    sys.exit(main())
