// Preloaded into a CLI process by a test (NODE_OPTIONS=--import=<this file>, MAX_RSS_FILE=<path>):
// when the process exits, it writes its peak resident memory in bytes to that file, so a test can
// hold the CLI to a memory bound whatever it was fed (bounded memory: …).
import { writeFileSync } from "node:fs";

process.on("exit", () => {
  writeFileSync(process.env.MAX_RSS_FILE, String(process.resourceUsage().maxRSS * 1024));
});
