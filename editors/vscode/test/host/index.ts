/** The extension-host test runner (code-server loads it through `extensionTestsPath`): mocha,
 * with the results written as JSON to $BATON_HOST_TEST_RESULTS (the host's console output
 * reaches the browser unformatted). */
import * as fs from "node:fs";
import * as path from "node:path";
import Mocha from "mocha";

export function run(): Promise<void> {
  const mocha = new Mocha({ ui: "bdd", timeout: 120_000, color: false });
  mocha.addFile(path.join(__dirname, "baton.test.js"));
  const out = process.env.BATON_HOST_TEST_RESULTS;
  const results: { title: string; state: string; error?: string }[] = [];
  return new Promise((resolve, reject) => {
    const runner = mocha.run((failures) => {
      if (out) fs.writeFileSync(out, JSON.stringify({ failures, results }, null, 1));
      if (failures > 0) reject(new Error(`${failures} extension-host tests failed`));
      else resolve();
    });
    runner.on("pass", (t) => results.push({ title: t.fullTitle(), state: "passed" }));
    runner.on("fail", (t, err: Error) => results.push({ title: t.fullTitle(), state: "failed",
                                                        error: String(err && err.stack || err) }));
  });
}
