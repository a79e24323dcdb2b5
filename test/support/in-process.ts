import type { Sandbox } from "../../src/index.js";

/**
 * One request through `sandbox.handle`, no HTTP server: a JSON body is sent as JSON, the answer's
 * body is parsed (undefined when empty). For replicas in one process sharing a store.
 */
export async function call(s: Sandbox, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const [pathOnly, query = ""] = path.split("?");
  const r = await s.handle({
    method,
    path: pathOnly!,
    query,
    headers: { host: "localhost", ...(body !== undefined && { "content-type": "application/json" }), ...headers },
    body: body === undefined ? new Uint8Array() : Buffer.from(JSON.stringify(body)),
  });
  const text = typeof r.body === "string" ? r.body : Buffer.from(r.body ?? "").toString("utf8");
  return { status: r.status, headers: r.headers, json: text ? JSON.parse(text) : undefined };
}
