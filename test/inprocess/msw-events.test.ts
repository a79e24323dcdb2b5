import { setupServer } from "msw/node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandbox, type Sandbox } from "../../src/app/sandbox.js";
import { createMswHandlers } from "../../src/adapters/msw.js";
import { openEventStream } from "../support/event-stream.js";

/** The event stream in-process: the msw adapter answers it with a ReadableStream body. */

const BASE = "https://api.merchant.test";

describe("GET /__sandbox/events through msw", () => {
  let sandbox: Sandbox;
  const server = setupServer();

  beforeAll(async () => {
    sandbox = await createSandbox({ frozenAt: "2026-01-01T00:00:00Z" });
    server.use(...createMswHandlers(sandbox, { baseUrl: BASE }));
    server.listen({ onUnhandledRequest: "error" });
  });
  afterAll(() => server.close());

  it("streams the journal entries as they happen", async () => {
    const stream = await openEventStream(`${BASE}/__sandbox/events`);
    expect([stream.status, stream.headers.get("content-type")]).toEqual([200, "text/event-stream; charset=utf-8"]);
    expect((await fetch(`${BASE}/api/v2/payment/x`)).status).toBe(401);
    const [event] = await stream.next(1);
    stream.close();
    expect(event).toEqual({ event: "request", id: "req_1", data: JSON.stringify(sandbox.journal.list()[0]) });
  });
});
