import { describe, expect, it } from "vitest";
import { T0, postJson, problem, type Reply, type TestServer, serversPerTest } from "../support/server.js";
import { expectProblem } from "../support/expect.js";

/**
 * The clock range (years 0001 to 9999) holds for every clock a request may read, including a
 * scenario's or session's clock composed with a moved sandbox clock: moving the sandbox clock moves
 * every clock that follows it, so the move is refused (400 clock_out_of_range, nothing moved) when
 * it would take any of them out of range. Over real HTTP, sandbox clock frozen at T0.
 */

/** A real server on port 0 for the current test, closed after it. */
const server = serversPerTest();

const iso = (ms: number) => new Date(ms).toISOString();
const YEAR_9999_JUNE = Date.UTC(9999, 5, 1);

function clockOf(t: TestServer, where: string, body?: unknown): Promise<Reply> {
  return t.call(where, body === undefined ? {} : postJson(body));
}

async function session(t: TestServer, scenario?: string): Promise<string> {
  const r = await t.call("/__sandbox/sessions", postJson(scenario === undefined ? {} : { scenario }));
  expect(r.status, r.text).toBe(201);
  return r.json.id as string;
}

function outOfRange(reading: string, whose: string, where = "/__sandbox/clock") {
  return problem(
    400,
    "Bad Request",
    "clock_out_of_range",
    `This change would set the clock outside the dates tokens can carry: ${whose} would read ${reading}, outside 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z. Advance or set it by less.`,
    where,
    "invalid_request",
  );
}

async function expectReadings(t: TestServer, readings: Record<string, number>): Promise<void> {
  for (const [where, ms] of Object.entries(readings)) {
    const r = await clockOf(t, where);
    expect(r.status, r.text).toBe(200);
    expect(r.json.now, where).toBe(iso(ms));
  }
}

describe("the clock range holds for clocks that follow the sandbox clock", () => {
  it("regression: a session clock set to 9999, then the sandbox clock advanced a year: refused, nothing moved (was +010000-… on the session clock)", async () => {
    const t = await server();
    const id = await session(t);
    const sessionClock = `/__sandbox/sessions/${id}/clock`;
    expect((await clockOf(t, sessionClock, { set: iso(YEAR_9999_JUNE) })).status).toBe(200);

    expectProblem(await clockOf(t, "/__sandbox/clock", { advance: "365d" }), outOfRange("+010000-05-31T00:00:00.000Z", `the clock of session ${id}`));
    await expectReadings(t, { "/__sandbox/clock": T0, [sessionClock]: YEAR_9999_JUNE });
  });

  it("regression: the sandbox clock far forward, a session clock far back, then the sandbox clock set back: refused before year 1", async () => {
    const t = await server();
    const id = await session(t);
    const sessionClock = `/__sandbox/sessions/${id}/clock`;
    expect((await clockOf(t, "/__sandbox/clock", { set: "9000-01-01T00:00:00Z" })).status).toBe(200);
    expect((await clockOf(t, sessionClock, { set: "0002-01-01T00:00:00Z" })).status).toBe(200);

    expectProblem(await clockOf(t, "/__sandbox/clock", { set: iso(T0) }), outOfRange("-006972-01-02T00:00:00.000Z", `the clock of session ${id}`));
    await expectReadings(t, { "/__sandbox/clock": Date.UTC(9000, 0, 1), [sessionClock]: Date.parse("0002-01-01T00:00:00Z") });
  });

  it("regression: a loaded scenario's clock_offset counts: the sandbox clock set to its last second is refused, naming the scenario", async () => {
    const t = await server({ scenarios: ["server-clock-ahead"] });
    expectProblem(
      await clockOf(t, "/__sandbox/clock", { set: "9999-12-31T23:59:59Z" }),
      outOfRange("+010000-01-01T01:59:59.000Z", "the clock of scenario 'server-clock-ahead'"),
    );
    await expectReadings(t, { "/__sandbox/clock": T0 });
    // Two hours less fits the scenario's clock too.
    expect((await clockOf(t, "/__sandbox/clock", { set: "9999-12-31T21:59:59Z" })).status).toBe(200);
  });

  it("a session clock frozen on its own does not follow, so it does not hold the sandbox clock back", async () => {
    const t = await server();
    const id = await session(t);
    const sessionClock = `/__sandbox/sessions/${id}/clock`;
    expect((await clockOf(t, sessionClock, { set: iso(YEAR_9999_JUNE), freeze: true })).status).toBe(200);
    expect((await clockOf(t, "/__sandbox/clock", { advance: "365d" })).status).toBe(200);
    await expectReadings(t, { "/__sandbox/clock": T0 + 365 * 86_400_000, [sessionClock]: YEAR_9999_JUNE });
  });

  it("a deleted session's clock no longer counts", async () => {
    const t = await server();
    const id = await session(t);
    expect((await clockOf(t, `/__sandbox/sessions/${id}/clock`, { set: iso(YEAR_9999_JUNE) })).status).toBe(200);
    expect((await t.call(`/__sandbox/sessions/${id}`, { method: "DELETE" })).status).toBe(204);
    const r = await clockOf(t, "/__sandbox/clock", { advance: "365d" });
    expect(r.status, r.text).toBe(200);
  });
});
