import assert from "node:assert/strict";
import { test } from "node:test";
import { createLogger } from "../src/log.js";

test("a secret or a JWT in a message or a field is written as [redacted]", () => {
  const lines = [];
  const log = createLogger({ secrets: () => ["s3cret-value", undefined], write: (l) => lines.push(l) });
  log.error("careless: s3cret-value", { header: "Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJtIn0.c2ln", status: 401 });
  assert.equal(lines.length, 1);
  const entry = JSON.parse(lines[0]);
  assert.equal(entry.level, "error");
  assert.equal(entry.message, "careless: [redacted]");
  assert.equal(entry.header, "Bearer [redacted jwt]");
  assert.equal(entry.status, 401);
});
