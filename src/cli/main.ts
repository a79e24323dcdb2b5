#!/usr/bin/env -S node --max-semi-space-size=2
// The command line's entry point, kept tiny on purpose: `serve` starts generating its signing key
// (early-key.ts) before the rest of the program is even parsed, then the program loads and runs
// with that key in hand.
import nodeModule from "node:module";

// Node 22.1+ keeps V8's compiled code of the bundle's modules on disk (in the OS temp folder, or
// NODE_COMPILE_CACHE) and reuses it at the next start instead of compiling them again; the image
// runs Node 22. Node 20 has no such function, and starts as before. Called before anything else
// is imported, so every chunk of the bundle is cached.
(nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache?.();

const { startEarlyKey } = await import("./early-key.js");
const earlyKey = startEarlyKey(process.argv.slice(2));
const { runCli } = await import("./program.js");
await runCli(process.argv, earlyKey);
