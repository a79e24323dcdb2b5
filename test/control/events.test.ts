import { describe, expect, it } from "vitest";
import { DEFAULT_SECRET, postJson, serversPerTest, type TestServer } from "../support/server.js";
import { openEventStream } from "../support/event-stream.js";

/**
 * GET /__sandbox/events over real HTTP: a real server on port 0 and a bounded reader that stops
 * after the events it waits for. The sandbox clock is frozen; nothing here sleeps.
 */

const start = serversPerTest();

async function createSession(t: TestServer, scenario = "default"): Promise<{ id: string; merchant: { api_key: string; api_secret: string } }> {
  const r = await t.call("/__sandbox/sessions", postJson({ scenario }));
  expect(r.status, r.text).toBe(201);
  return r.json;
}

function exchangeUnder(t: TestServer, session: string, m: { api_key: string; api_secret: string }) {
  return t.call(`/s/${session}/api/v2/auth/token`, postJson({ api_key: m.api_key, api_secret: m.api_secret }));
}

describe("GET /__sandbox/events", () => {
  it("streams a session's journal entries in order, as GET /__sandbox/requests shows them, and not another session's", async () => {
    const t = await start();
    const a = await createSession(t);
    const b = await createSession(t);
    const stream = await openEventStream(`${t.url}/__sandbox/events?session=${a.id}`);
    expect(stream.status).toBe(200);
    expect(stream.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    expect(stream.headers.get("cache-control")).toBe("no-store");
    expect(stream.headers.get("x-accel-buffering")).toBe("no");
    expect(stream.headers.get("content-length")).toBeNull();
    expect((await exchangeUnder(t, b.id, b.merchant)).status).toBe(200);
    expect((await exchangeUnder(t, a.id, a.merchant)).status).toBe(200);
    expect((await t.call(`/s/${a.id}/api/v2/payment/x`)).status).toBe(401);
    const events = await stream.next(3);
    stream.close();
    const journal = (await t.call(`/__sandbox/requests?session=${a.id}`)).json.requests;
    expect(journal).toHaveLength(2);
    expect(events.map((e) => e.event)).toEqual(["request", "request", "findings"]);
    expect(events.slice(0, 2).map((e) => e.id)).toEqual(journal.map((e: { id: string }) => e.id));
    expect(events.slice(0, 2).map((e) => JSON.parse(e.data))).toEqual(journal);
  });

  it("a burst of requests arrives whole and in journal order (the frames of one turn of the event loop go out together)", async () => {
    const t = await start();
    const a = await createSession(t);
    const stream = await openEventStream(`${t.url}/__sandbox/events?session=${a.id}`);
    const statuses = await Promise.all(Array.from({ length: 30 }, (_, i) => t.call(`/s/${a.id}/api/v2/payment/burst-${i}`).then((r) => r.status)));
    expect(statuses).toEqual(Array(30).fill(401));
    const requests = [];
    // Findings events may come between them (worked out on a timer): only the request events count here.
    while (requests.length < 30) requests.push(...(await stream.next(1)).filter((e) => e.event === "request"));
    stream.close();
    const journal = (await t.call(`/__sandbox/requests?session=${a.id}`)).json.requests;
    expect(journal).toHaveLength(30);
    expect(requests.map((e) => JSON.parse(e.data))).toEqual(journal);
  });

  it("sends a session's findings when a request changes them, and not again when they stay the same", async () => {
    const t = await start();
    const a = await createSession(t);
    const stream = await openEventStream(`${t.url}/__sandbox/events?session=${a.id}`);
    const kinds = (events: Array<{ event: string; id?: string }>) => events.map((e) => [e.event, e.id]);
    // Findings are worked out once a burst of requests settles: each step waits for them.
    await t.call(`/s/${a.id}/api/v2/payment/x`);
    expect(kinds(await stream.next(2))).toEqual([
      ["request", "req_1"],
      ["findings", "req_1"],
    ]);
    // The second mistake changes the finding's count and evidence.
    await t.call(`/s/${a.id}/api/v2/payment/x`);
    expect(kinds(await stream.next(2))).toEqual([
      ["request", "req_2"],
      ["findings", "req_2"],
    ]);
    // The good exchange changes nothing: no findings event for it, only for the third mistake.
    expect((await exchangeUnder(t, a.id, a.merchant)).status).toBe(200);
    await t.call(`/s/${a.id}/api/v2/payment/x`);
    const last = await stream.next(3);
    stream.close();
    expect(kinds(last)).toEqual([
      ["request", "req_3"],
      ["request", "req_4"],
      ["findings", "req_4"],
    ]);
    const report = (await t.call(`/__sandbox/sessions/${a.id}/report`)).json;
    expect(JSON.parse(last[2]!.data)).toEqual({ session: a.id, findings: report.findings });
  });

  it("without a session streams every request, clock moves, session changes and history entries, with no credentials", async () => {
    const t = await start();
    const stream = await openEventStream(`${t.url}/__sandbox/events`);
    const a = await createSession(t);
    expect((await t.call("/__sandbox/clock", postJson({ advance: "1h" }))).status).toBe(200);
    expect((await t.call(`/__sandbox/sessions/${a.id}/clock`, postJson({ advance: "61m", freeze: true }))).status).toBe(200);
    // Break it now: the stream says which actions ran and the rule they added, never a rotated secret.
    const actions = { now: { revoke_token: "all", rotate_secret: true }, next: { endpoint: "token", times: 2, then: { respond: { status: 503 } } } };
    expect((await t.call(`/__sandbox/sessions/${a.id}/actions`, postJson(actions))).status).toBe(200);
    expect((await t.call(`/__sandbox/sessions/${a.id}/reset`, postJson({}))).status).toBe(200);
    expect((await t.call(`/__sandbox/sessions/${a.id}`, { method: "DELETE" })).status).toBe(204);
    const events = await stream.next(9);
    stream.close();
    expect(events.map((e) => ({ event: e.event, id: e.id, data: JSON.parse(e.data) }))).toEqual([
      { event: "session", id: "req_0", data: { change: "created", id: a.id, scenario: "default" } },
      { event: "clock", id: "req_0", data: { now: "2026-01-01T01:00:00.000Z", frozen: true } },
      { event: "clock", id: "req_0", data: { session: a.id, now: "2026-01-01T02:01:00.000Z", frozen: true } },
      { event: "history", id: "req_0.1", data: expect.objectContaining({ kind: "clock", change: { advance: "61m", freeze: true } }) },
      {
        event: "session",
        id: "req_0",
        data: { change: "actions", id: a.id, scenario: "default", applied: ["rotate_secret", "revoke_token"], rule: "default/action-1" },
      },
      {
        event: "history",
        id: "req_0.2",
        data: expect.objectContaining({ kind: "actions", now: { revoke_token: "all", rotate_secret: true }, next: expect.any(Object) }),
      },
      { event: "session", id: "req_0", data: { change: "reset", id: a.id, scenario: "default" } },
      { event: "history", id: "req_0.3", data: expect.objectContaining({ kind: "reset", session: a.id }) },
      { event: "session", id: "req_0", data: { change: "ended", id: a.id, scenario: "default", reason: "deleted" } },
    ]);
  });

  it("ends a session's streams when the session ends: the ended event, then the end of the answer, and its place is free", async () => {
    const t = await start({ maxEventSubscribers: 1 });
    const a = await createSession(t);
    const stream = await openEventStream(`${t.url}/__sandbox/events?session=${a.id}`);
    expect(stream.status).toBe(200);
    expect((await t.call(`/__sandbox/sessions/${a.id}`, { method: "DELETE" })).status).toBe(204);
    const events = await stream.untilEnd();
    expect(events.map((e) => [e.event, JSON.parse(e.data)])).toEqual([
      ["session", { change: "ended", id: a.id, scenario: "default", reason: "deleted" }],
    ]);
    // The only place is free again at once (it was freed when the session ended, not on disconnect).
    const next = await openEventStream(`${t.url}/__sandbox/events`);
    expect(next.status).toBe(200);
    next.close();
  });

  it("replays the journal after Last-Event-ID (or ?since=), then goes live", async () => {
    const t = await start();
    for (let i = 0; i < 3; i++) await t.call("/api/v2/payment/x");
    const replayed = await openEventStream(`${t.url}/__sandbox/events`, { "last-event-id": "req_1" });
    const bySince = await openEventStream(`${t.url}/__sandbox/events?since=req_2`);
    await t.call("/api/v2/payment/y");
    expect((await replayed.next(3)).map((e) => e.id)).toEqual(["req_2", "req_3", "req_4"]);
    expect((await bySince.next(2)).map((e) => e.id)).toEqual(["req_3", "req_4"]);
    replayed.close();
    bySince.close();
  });

  it("replays everything kept to a page resuming from an id past the newest (from before the sandbox started over)", async () => {
    const t = await start();
    for (let i = 0; i < 3; i++) await t.call("/api/v2/payment/x");
    const resumed = await openEventStream(`${t.url}/__sandbox/events`, { "last-event-id": "req_5" });
    expect((await resumed.next(3)).map((e) => e.id)).toEqual(["req_1", "req_2", "req_3"]);
    await t.call("/api/v2/payment/y");
    expect((await resumed.next(1)).map((e) => e.id)).toEqual(["req_4"]);
    resumed.close();
  });

  it("replays a session's history entries in order with its requests, from a request id or a history entry's id, then sends new ones live", async () => {
    const t = await start();
    const a = await createSession(t);
    const b = await createSession(t);
    expect((await exchangeUnder(t, a.id, a.merchant)).status).toBe(200);
    expect((await t.call(`/__sandbox/sessions/${a.id}/clock`, postJson({ advance: "61m" }))).status).toBe(200);
    expect((await t.call(`/__sandbox/sessions/${b.id}/clock`, postJson({ advance: "5m" }))).status).toBe(200);
    expect((await exchangeUnder(t, a.id, a.merchant)).status).toBe(200);
    expect((await t.call(`/__sandbox/sessions/${a.id}/actions`, postJson({ now: { revoke_token: "all" } }))).status).toBe(200);
    const history = (await t.call(`/__sandbox/sessions/${a.id}`)).json.history;
    expect(history.map((h: { id: string; kind: string }) => [h.id, h.kind])).toEqual([
      ["req_1.1", "clock"],
      ["req_2.3", "actions"],
    ]);
    const kinds = (events: Array<{ event: string; id?: string }>) => events.map((e) => [e.event, e.id]);

    const all = await openEventStream(`${t.url}/__sandbox/events?session=${a.id}&since=req_0`);
    const replayed = await all.next(4);
    expect(kinds(replayed)).toEqual([
      ["request", "req_1"],
      ["history", "req_1.1"],
      ["request", "req_2"],
      ["history", "req_2.3"],
    ]);
    // The entry as the session shows it.
    expect([JSON.parse(replayed[1]!.data), JSON.parse(replayed[3]!.data)]).toEqual(history);
    // Live: the clock event, then the entry (its id last, so a reconnect does not replay it again).
    expect((await t.call(`/__sandbox/sessions/${a.id}/reset`, postJson({}))).status).toBe(200);
    expect(kinds(await all.next(2))).toEqual([
      ["session", "req_2"],
      ["history", "req_2.4"],
    ]);
    all.close();

    // From a history entry's id (Last-Event-ID as a stream sets it): only what came after it.
    const resumed = await openEventStream(`${t.url}/__sandbox/events?session=${a.id}`, { "last-event-id": "req_1.1" });
    expect(kinds(await resumed.next(3))).toEqual([
      ["request", "req_2"],
      ["history", "req_2.3"],
      ["history", "req_2.4"],
    ]);
    resumed.close();
    // A stream of every session replays every session's entries.
    const everything = await openEventStream(`${t.url}/__sandbox/events?since=req_1`);
    expect(kinds(await everything.next(4))).toEqual([
      ["history", "req_1.1"],
      ["history", "req_1.2"],
      ["request", "req_2"],
      ["history", "req_2.3"],
    ]);
    everything.close();
  });

  it("bounded memory: a replay counts against the buffer: a page of eventBufferSize requests, overflow, the end; the next page from the last id", async () => {
    const t = await start({ eventBufferSize: 3, maxEventSubscribers: 1 });
    for (let i = 0; i < 7; i++) await t.call("/api/v2/payment/x");
    const overflow = [
      "overflow",
      undefined,
      { reason: "more than 3 events were waiting for this client; reconnect with Last-Event-ID to replay the requests missed" },
    ];
    const first = await openEventStream(`${t.url}/__sandbox/events?since=req_0`);
    expect((await first.untilEnd()).map((e) => [e.event, e.id, JSON.parse(e.data).id ?? JSON.parse(e.data)])).toEqual([
      ["request", "req_1", "req_1"],
      ["request", "req_2", "req_2"],
      ["request", "req_3", "req_3"],
      overflow,
    ]);
    // A replay that overflows ends at once and never took the one place: the next page opens.
    const second = await openEventStream(`${t.url}/__sandbox/events`, { "last-event-id": "req_3" });
    expect((await second.untilEnd()).map((e) => e.id ?? e.event)).toEqual(["req_4", "req_5", "req_6", "overflow"]);
    // Exactly a buffer's worth left: no overflow, the stream goes live.
    const last = await openEventStream(`${t.url}/__sandbox/events`, { "last-event-id": "req_4" });
    await t.call("/api/v2/payment/y");
    expect((await last.next(4)).map((e) => e.id)).toEqual(["req_5", "req_6", "req_7", "req_8"]);
    last.close();
  });

  it("refuses more subscribers than the limit with 429 too_many_subscribers", async () => {
    const t = await start({ maxEventSubscribers: 1 });
    const first = await openEventStream(`${t.url}/__sandbox/events`);
    const second = await openEventStream(`${t.url}/__sandbox/events`);
    expect(second.status).toBe(429);
    expect(JSON.parse(await second.text())).toEqual({
      type: "urn:merchant-sandbox:problem:too_many_subscribers",
      title: "Too Many Requests",
      status: 429,
      detail:
        "This sandbox already streams events to 1 clients. Close a stream you no longer read, or raise maxEventSubscribers (--max-event-subscribers).",
      instance: "/__sandbox/events",
      code: "too_many_subscribers",
      error: "rate_limited",
      error_description:
        "This sandbox already streams events to 1 clients. Close a stream you no longer read, or raise maxEventSubscribers (--max-event-subscribers).",
    });
    first.close();
  });

  it("forgets a subscriber whose client went away: its place is free again", async () => {
    const t = await start({ maxEventSubscribers: 1 });
    const first = await openEventStream(`${t.url}/__sandbox/events`);
    first.close();
    // The server learns of the disconnect asynchronously; the retries only wait for that.
    let status = 0;
    for (let i = 0; i < 200 && status !== 200; i++) {
      const again = await openEventStream(`${t.url}/__sandbox/events`);
      status = again.status;
      again.close();
      if (status !== 200) await new Promise((r) => setTimeout(r, 5));
    }
    expect(status).toBe(200);
  });

  it("ends open streams when the server closes, without waiting out the grace", async () => {
    const t = await start();
    const stream = await openEventStream(`${t.url}/__sandbox/events`);
    const outcome = await t.server.close(60_000);
    expect(await stream.untilEnd()).toEqual([]);
    expect(outcome).toEqual({ answered: 1, cut: 0 });
  });

  it("never puts a secret in an event: a secret sent in the URL is redacted as in the journal", async () => {
    const t = await start();
    const stream = await openEventStream(`${t.url}/__sandbox/events`);
    await t.call(`/api/v2/payment/x?api_secret=${DEFAULT_SECRET}`);
    const [event] = await stream.next(1);
    stream.close();
    expect(event!.data).not.toContain(DEFAULT_SECRET);
    expect(JSON.parse(event!.data).secretInQuery).toBe(true);
  });

  it("answers bad requests like the other control routes", async () => {
    const t = await start({ adminToken: "an-admin-token-long-enough", maxEventSubscribers: 1 });
    const admin = { "x-admin-token": "an-admin-token-long-enough" };
    expect((await t.call("/__sandbox/events")).status).toBe(401);
    const unknownSession = await t.call("/__sandbox/events?session=ses_0123456789abcdef", { headers: admin });
    expect([unknownSession.status, unknownSession.json.code]).toEqual([404, "not_found"]);
    const unknownParam = await t.call("/__sandbox/events?token=x", { headers: admin });
    expect([unknownParam.status, unknownParam.json.code]).toEqual([400, "unknown_parameter"]);
    const badSince = await t.call("/__sandbox/events", { headers: { ...admin, "last-event-id": "yesterday" } });
    expect([badSince.status, badSince.json.code]).toEqual([400, "since_invalid"]);
    const post = await t.call("/__sandbox/events", postJson({}, admin));
    expect([post.status, post.headers.get("allow")]).toEqual([405, "GET, HEAD"]);
    // A HEAD answers with GET's status and type, and opens no stream (the one place stays free).
    const head = await t.call("/__sandbox/events", { method: "HEAD", headers: admin });
    expect([head.status, head.headers.get("content-type"), head.text]).toEqual([200, "text/event-stream; charset=utf-8", ""]);
    const stream = await openEventStream(`${t.url}/__sandbox/events`, admin);
    expect(stream.status).toBe(200);
    stream.close();
  });
});
