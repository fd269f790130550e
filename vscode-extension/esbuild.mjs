// Builds the extension (Node, CommonJS, `vscode` external), the webview script (browser IIFE), with
// --tests the unit tests, with --e2e the end-to-end driver, and with --bench the editor benchmarks. --production minifies; --watch rebuilds.
import * as esbuild from "esbuild";
import { copyFileSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";

const args = new Set(process.argv.slice(2));
const production = args.has("--production");

const common = { bundle: true, sourcemap: !production, minify: production, logLevel: "warning" };

const builds = [
  {
    ...common,
    entryPoints: ["src/extension.ts"],
    outfile: "dist/extension.js",
    platform: "node",
    format: "cjs",
    target: "node20",
    external: ["vscode"],
  },
  {
    ...common,
    entryPoints: ["src/webview/main.ts"],
    outfile: "dist/webview.js",
    platform: "browser",
    format: "iife",
    target: "es2022",
  },
];

if (args.has("--tests")) {
  const unit = readdirSync("test/unit").filter((f) => f.endsWith(".test.ts")).map((f) => join("test/unit", f));
  builds.push({
    ...common,
    sourcemap: true,
    minify: false,
    entryPoints: unit,
    outdir: "out/test/unit",
    platform: "node",
    format: "cjs",
    target: "node20",
  });
}
if (args.has("--e2e")) {
  builds.push({
    ...common,
    sourcemap: true,
    minify: false,
    // Every *.test.ts, as for the unit tests: a new e2e file runs without being listed here.
    entryPoints: readdirSync("test/e2e").filter((f) => f.endsWith(".test.ts")).map((f) => join("test/e2e", f)),
    outdir: "out/test/e2e",
    platform: "node",
    format: "cjs",
    target: "node20",
    external: ["playwright-core"],
  });
}

if (args.has("--bench")) {
  builds.push({
    ...common,
    sourcemap: true,
    minify: false,
    entryPoints: ["test/bench/editors.ts"],
    outdir: "out/test/bench",
    platform: "node",
    format: "cjs",
    target: "node20",
    external: ["playwright-core"],
  });
}

// The webview's icon font, served from dist/ (the webview may load only the extension's own files).
mkdirSync("dist/codicons", { recursive: true });
for (const file of ["codicon.css", "codicon.ttf"]) {
  copyFileSync(join("node_modules/@vscode/codicons/dist", file), join("dist/codicons", file));
}

if (args.has("--watch")) {
  for (const options of builds) await (await esbuild.context(options)).watch();
} else {
  await Promise.all(builds.map((options) => esbuild.build(options)));
}
