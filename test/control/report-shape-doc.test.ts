import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { postJson, serversPerTest } from "../support/server.js";

/**
 * Issue 34: docs/control-plane.md showed the report as `{"findings": […]}` while a session's report
 * is `{"session", "findings"}`. The row of the control-plane table is held to what the two report
 * routes send: the members it names, in order, are the answers' own.
 */

const DOC = readFileSync(new URL("../../docs/control-plane.md", import.meta.url), "utf8");
const ROW = DOC.split("\n").find((line) => line.startsWith("| `GET /__sandbox/sessions/{id}/report`"))!;
/** The member names of the n-th JSON object the row shows. */
const shown = (n: number) => [...[...ROW.matchAll(/`(\{"[^`]*\})`/g)][n]![1]!.matchAll(/"(\w+)":/g)].map((m) => m[1]);

const server = serversPerTest();

describe("the report's shape in docs/control-plane.md", () => {
  it("a session's report: the members the doc names, in its order", async () => {
    const t = await server();
    const created = await t.call("/__sandbox/sessions", postJson({}));
    expect(created.status).toBe(201);
    const report = await t.call(`/__sandbox/sessions/${created.json.id}/report`);
    expect(report.status).toBe(200);
    expect(Object.keys(report.json)).toEqual(shown(0));
    expect(shown(0)).toEqual(["session", "findings"]);
    expect(report.json).toEqual({ session: created.json.id, findings: [] });
  });

  it("the sandbox's report: the members the doc names", async () => {
    const report = await (await server()).call("/__sandbox/report");
    expect(report.status).toBe(200);
    expect(report.headers.get("content-type")).toBe("application/json");
    expect(report.json).toEqual({ findings: [] });
    expect(Object.keys(report.json)).toEqual(shown(1));
    expect(shown(1)).toEqual(["findings"]);
  });
});
