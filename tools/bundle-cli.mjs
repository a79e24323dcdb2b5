// Bundles the CLI (dist/cli/main.js, compiled by tsc) into dist/bin/: one esbuild bundle split into
// chunks, so a start compiles only the chunks it imports (docs/architecture.md, "What a start loads").
// The image ships dist/bin alone, without node_modules: everything the CLI runs is in it.
import { rmSync } from "node:fs";
import { dirname } from "node:path";
import { build } from "esbuild";

const root = new URL("..", import.meta.url);
const out = new URL("dist/bin/", root);
rmSync(out, { recursive: true, force: true });

/**
 * string-width (yargs' and cliui's, to measure text for the help layout) builds two
 * Intl.Segmenters and five Unicode-property regular expressions when its module is evaluated:
 * ~30-90 ms of every start on Node 20 (ICU loads its break rules), although only `--help` and
 * usage errors lay out text. Every `import stringWidth from "string-width"` gets a stand-in whose
 * first call evaluates the real module: esbuild evaluates a module that is require()d, and what it
 * imports, when require runs, not at start. Same function, same results; only when it costs.
 */
const lazyStringWidth = {
  name: "lazy-string-width",
  setup(b) {
    b.onResolve({ filter: /^string-width$/ }, async (args) => {
      if (args.pluginData === "real") return undefined;
      const real = await b.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: "real" });
      if (real.errors.length > 0) return { errors: real.errors };
      return { path: real.path, namespace: "lazy-string-width" };
    });
    b.onLoad({ filter: /.*/, namespace: "lazy-string-width" }, (args) => ({
      contents: `let real;\nexport default function stringWidth(string, options) {\n  real ??= require(${JSON.stringify(args.path)}).default;\n  return real(string, options);\n}\n`,
      resolveDir: dirname(args.path),
      loader: "js",
    }));
  },
};

await build({
  entryPoints: [new URL("dist/cli/main.js", root).pathname],
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  outdir: out.pathname,
  chunkNames: "[name]-[hash]",
  logLevel: "warning",
  // Bundled CommonJS dependencies call require(): in an ES module it has to be made.
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  plugins: [lazyStringWidth],
});
