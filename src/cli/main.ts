#!/usr/bin/env -S node --max-semi-space-size=2
// The command line's entry point, kept tiny on purpose: `serve` starts generating its signing key
// (early-key.ts) before the rest of the program is even parsed, then the program loads and runs
// with that key in hand.
import { startEarlyKey } from "./early-key.js";

const earlyKey = startEarlyKey(process.argv.slice(2));
const { runCli } = await import("./program.js");
await runCli(process.argv, earlyKey);
