// npm run bench:amplification: what a rendering-amplification rule costs a sandbox (attack round
// four, class 1), for each build named (default: this one). AMPLIFICATION_BUILDS="before=/path/to/an/
// older/checkout,now=." compares builds in one run (each built with `npm run build`). Per build: a
// session's `next` rule answers its next 3 payment calls with a body printing {{request.path}}
// 3,700 times, then three such calls with 15 KB paths are sent at once; it records each answer's
// status and size, the time they took, and the server's peak RSS (VmHWM) before and after.
// Writes bench/results/amplification.{json,md}. Loopback only; the server is stopped by its PID.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { freePort, machineDescription, ROOT, writeRecordedRun } from "./support.mjs";

const BUILDS = (process.env.AMPLIFICATION_BUILDS ?? "this build=.").split(",").map((pair) => {
  const [label, dir] = pair.split("=");
  return { label, dir: resolve(ROOT, dir) };
});
const LONG_PATH = `/api/v2/payment/${"p".repeat(15_000)}`;

const peakMb = (pid) => Math.round(Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))[1]) / 1024);

async function measure(build) {
  const port = await freePort();
  const child = spawn(process.execPath, [`${build.dir}/dist/bin/main.js`, "serve", "--port", String(port), "--log-format", "off"], {
    stdio: "ignore",
  });
  const base = `http://127.0.0.1:${port}`;
  try {
    for (let i = 0; i < 200; i++) {
      try {
        if ((await fetch(`${base}/__sandbox/health`)).ok) break;
      } catch {}
      await new Promise((r) => setTimeout(r, 50));
    }
    const post = (path, body) =>
      fetch(base + path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }).then((r) => r.json());
    const s = await post("/__sandbox/sessions", {});
    const body = { x: Array.from({ length: 3_700 }, () => "{{request.path}}").join("") };
    await post(`/__sandbox/sessions/${s.id}/actions`, { next: { endpoint: "payment", times: 3, then: { respond: { status: 200, body } } } });
    const { access_token } = await post(`/s/${s.id}/api/v2/auth/token`, { api_key: s.merchant.api_key, api_secret: s.merchant.api_secret });
    const before = peakMb(child.pid);
    const started = performance.now();
    const answers = await Promise.all(
      [1, 2, 3].map(() =>
        fetch(`${base}/s/${s.id}${LONG_PATH}`, { headers: { authorization: `Bearer ${access_token}` } })
          .then(async (r) => ({ status: r.status, bytes: (await r.arrayBuffer()).byteLength }))
          .catch(() => ({ status: "cut", bytes: 0 })),
      ),
    );
    return { build: build.label, ms: Math.round(performance.now() - started), peakBeforeMb: before, peakAfterMb: peakMb(child.pid), answers };
  } finally {
    child.kill("SIGTERM");
  }
}

const runs = [];
for (const build of BUILDS) runs.push(await measure(build));
const md = [
  `Measured ${new Date().toISOString().slice(0, 10)} on ${machineDescription()}; \`npm run bench:amplification\`: a session's next rule printing {{request.path}} 3,700 times, three calls with 15 KB paths at once.`,
  "",
  "| build | answers (status, bytes) | time for all three | peak RSS before → after |",
  "|---|---|---|---|",
  ...runs.map(
    (r) =>
      `| ${r.build} | ${r.answers.map((a) => `${a.status} ${a.bytes.toLocaleString("en")} B`).join("; ")} | ${r.ms.toLocaleString("en")} ms | ${r.peakBeforeMb} → ${r.peakAfterMb} MB |`,
  ),
  "",
].join("\n");
writeRecordedRun("amplification", { measuredAt: new Date().toISOString(), machine: machineDescription(), runs }, md);
process.stdout.write(md);
