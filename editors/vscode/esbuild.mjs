// Bundles the extension host (node, CommonJS, `vscode` external), the web client for the
// webview and for `baton web`, and the tests; copies the stylesheet. `node esbuild.mjs`.
import { build } from "esbuild";
import { copyFileSync, mkdirSync, readdirSync } from "node:fs";

const common = { bundle: true, sourcemap: false, logLevel: "warning", target: "es2022", charset: "utf8" };
mkdirSync("out", { recursive: true });
await Promise.all([
  build({ ...common, entryPoints: ["src/extension.ts"], outfile: "out/extension.js",
          platform: "node", format: "cjs", external: ["vscode"] }),
  build({ ...common, entryPoints: ["web/webview-main.ts"], outfile: "out/webview.js",
          platform: "browser", format: "iife" }),
  build({ ...common, entryPoints: ["web/browser-main.ts"], outfile: "out/browser.js",
          platform: "browser", format: "iife" }),
  build({ ...common, entryPoints: readdirSync("test/unit").filter((f) => f.endsWith(".test.ts"))
            .map((f) => `test/unit/${f}`), outdir: "out/unit", platform: "node", format: "cjs" }),
  build({ ...common, entryPoints: ["test/host/index.ts", "test/host/baton.test.ts"],
          outdir: "out/test", platform: "node", format: "cjs", external: ["vscode", "mocha"] }),
]);
copyFileSync("web/view.css", "out/view.css");
// `baton web` serves the same client from the Python package: kept in the tree, so a clone
// (and the wheel, and the single-file binary) has it with no Node at run time.
copyFileSync("out/browser.js", "../../baton_tui/web/static/browser.js");
copyFileSync("web/view.css", "../../baton_tui/web/static/view.css");
