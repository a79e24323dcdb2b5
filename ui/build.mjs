// Builds the QA page (served at /__sandbox/ui/) into dist/ui/: one script, one stylesheet (every
// CSS file a component imports, which esbuild gathers into app.css) and the HTML shell, with no CDN and nothing fetched at run time, so it works offline and in the image.
// Prints the shipped size, which the README records.
import { copyFileSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

const root = new URL("..", import.meta.url);
const out = new URL("dist/ui/", root);
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

await build({
  entryPoints: [new URL("ui/src/main.tsx", root).pathname],
  bundle: true,
  minify: true,
  format: "esm",
  target: ["chrome115", "firefox115", "safari16"],
  outfile: new URL("app.js", out).pathname,
  jsx: "automatic",
  jsxImportSource: "preact",
  legalComments: "none",
  logLevel: "warning",
});
copyFileSync(new URL("ui/index.html", root), new URL("index.html", out));

if (process.argv.includes("--size")) {
  for (const name of ["index.html", "app.js", "app.css"]) {
    const bytes = readFileSync(new URL(name, out));
    console.log(`${name.padEnd(10)} ${String(bytes.length).padStart(7)} bytes, ${String(gzipSync(bytes).length).padStart(6)} gzipped`);
  }
}
