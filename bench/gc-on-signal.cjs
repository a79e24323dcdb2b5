// Preloaded (`node --expose-gc --require ./bench/gc-on-signal.cjs`) into the server of the bench's
// sessions growth: SIGUSR2 runs a full garbage collection, so the RSS read after it shows what the
// sessions still hold, not garbage V8 has not collected yet. Bench only; never in the product.
process.on("SIGUSR2", () => globalThis.gc?.());
