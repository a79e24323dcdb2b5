#!/usr/bin/env -S node --max-semi-space-size=2
// The command line's entry point, kept tiny on purpose: `serve` starts generating its signing key
// (early-key.ts) before the rest of the program is even parsed, then the program loads.
import "./early-key.js";

await import("./program.js");
