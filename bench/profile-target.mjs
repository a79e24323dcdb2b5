// The sandbox served from a build's unbundled library (<build>/dist/index.js, not the CLI's
// bundle), so a CPU profile names each function by its module's path: node_modules/ioredis,
// dist/store, dist/app/shared, and so on. No request log (the CLI's --log-format off).
// Usage: node --cpu-prof bench/profile-target.mjs <build directory> [state URL]
// Prints "listening on <url>"; SIGTERM closes it, so the profile is written.
import { pathToFileURL } from "node:url";

const [build, state] = process.argv.slice(2);
const { createSandbox, startServer } = await import(pathToFileURL(`${build}/dist/index.js`).href);
const sandbox = await createSandbox({ algorithm: "RS256", ...(state ? { state } : {}) });
const server = await startServer(sandbox, { port: 0 });
console.log(`listening on ${server.url}`);
process.once("SIGTERM", () => {
  server.close().then(() => process.exit(0));
});
