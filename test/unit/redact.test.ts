import { describe, expect, it } from "vitest";
import { redact, redactUrl } from "../../src/core/redact.js";
import { DEFAULT_MERCHANT, MerchantRegistry } from "../../src/core/merchants.js";
import { EMPTY_VIEW, MIN_ANYWHERE_LENGTH, SecretIndex, unionOf } from "../../src/core/secret-index.js";
import type { RequestLogEntry } from "../../src/app/sandbox.js";
import { testSandbox } from "../support/keys.js";

const JWT = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJtZXJjaGFudCJ9.c2lnbmF0dXJlLXNpZ25hdHVyZQ";

/** The query alone, with no merchant secret known: JWTs and secret-named parameters. */
const redactQuery = (query: string): string => redactUrl("", query, EMPTY_VIEW).query;

describe("redact", () => {
  it.each([
    ["sandbox-api-secret", "sand...(18 chars, sha256:27872975)"],
    ["sandbox-password", "sand...(16 chars, sha256:5369724f)"],
    ["eyJhbGciOiJSUzI1NiJ9.e30.sig", "eyJh...(28 chars, sha256:f68a3817)"],
    // 12 characters or fewer: no head at all, only length and hash.
    ["s3cret value", "...(12 chars, sha256:47219cf9)"],
    ["short", "...(5 chars, sha256:f9b0078b)"],
  ])("redacts %j as %j", (secret, expected) => {
    expect(redact(secret)).toBe(expected);
  });

  it.each([
    "sandbox-api-secret",
    "sandbox-payment-token",
    "mpt_test_9f8e7d6c5b4a",
    JWT,
    "correct horse battery staple",
    "short-pw",
  ])("never contains the secret %j", (secret) => {
    const out = redact(secret);
    expect(out).not.toContain(secret);
    // Never more than the first 4 characters.
    expect(out).not.toContain(secret.slice(0, 5));
  });

  it("the same input gives the same output", () => {
    expect(redact("sandbox-api-secret")).toBe(redact("sandbox-api-secret"));
    expect(redact(JWT)).toBe(redact(JWT));
  });

  it("different inputs give different outputs, even with the same head and length", () => {
    expect(redact("sandbox-secret-A")).not.toBe(redact("sandbox-secret-B"));
    expect(redact("sandbox-secret-A")).toMatch(/^sand\.\.\.\(16 chars, sha256:[0-9a-f]{8}\)$/);
    expect(redact("sandbox-secret-B")).toMatch(/^sand\.\.\.\(16 chars, sha256:[0-9a-f]{8}\)$/);
    expect(redact("abc")).not.toBe(redact("abd"));
  });

  it("handles the empty string", () => {
    expect(redact("")).toBe("...(0 chars, sha256:e3b0c442)");
  });
});

describe("redactQuery", () => {
  it("returns the empty string for no query", () => {
    expect(redactQuery("")).toBe("");
  });

  it.each([
    "access_token",
    "token",
    "api_secret",
    "password",
    "payment_token",
    "secret",
    "jwt",
  ])("redacts the value of %s and keeps the other parameters as they are", (key) => {
    const out = redactQuery(`page=2&${key}=sandbox-api-secret&sort=desc`);
    expect(out).toBe(`page=2&${key}=sand...(18 chars, sha256:27872975)&sort=desc`);
    expect(out).not.toContain("sandbox-api-secret");
  });

  it("redacts access_token, api_secret and password together", () => {
    const out = redactQuery(`access_token=${JWT}&api_key=sandbox-api-key&api_secret=sandbox-api-secret&password=sandbox-password`);
    expect(out).toBe(
      `access_token=${redact(JWT)}&api_key=sandbox-api-key&api_secret=sand...(18 chars, sha256:27872975)&password=sand...(16 chars, sha256:5369724f)`,
    );
    expect(out).not.toContain(JWT);
    expect(out).not.toContain("sandbox-api-secret");
    expect(out).not.toContain("sandbox-password");
  });

  it("matches keys case-insensitively and percent-decoded, keeping the key as sent", () => {
    expect(redactQuery("PASSWORD=sandbox-password")).toBe("PASSWORD=sand...(16 chars, sha256:5369724f)");
    expect(redactQuery("api%5Fsecret=sandbox-api-secret")).toBe("api%5Fsecret=sand...(18 chars, sha256:27872975)");
  });

  it("redacts the decoded value, so an encoded secret is not readable either", () => {
    expect(redactQuery("password=sandbox%2Dpassword")).toBe("password=sand...(16 chars, sha256:5369724f)");
    expect(redactQuery("password=s3cret+value")).toBe("password=...(12 chars, sha256:47219cf9)");
  });

  it("redacts every occurrence of a repeated secret parameter", () => {
    expect(redactQuery("token=abc&token=abd")).toBe(`token=${redact("abc")}&token=${redact("abd")}`);
  });

  it("leaves other parameters, parameters without a value and malformed encodings alone", () => {
    expect(redactQuery("amount=100&currency=EUR&flag")).toBe("amount=100&currency=EUR&flag");
    expect(redactQuery("q=%E0%A4%A&x=1")).toBe("q=%E0%A4%A&x=1");
    expect(redactQuery("access_token")).toBe("access_token");
  });

  it("redacts any parameter whose name says secret, and any JWT-shaped value whatever its name", () => {
    expect(redactQuery("tokens=1&my_password=2")).toBe(`tokens=${redact("1")}&my_password=${redact("2")}`);
    expect(redactQuery("accessToken=a&client_secret=b&id_token=c&auth=d")).toBe(
      `accessToken=${redact("a")}&client_secret=${redact("b")}&id_token=${redact("c")}&auth=${redact("d")}`,
    );
    const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln";
    expect(redactQuery(`q=${jwt}&amount=5`)).toBe(`q=${redact(jwt)}&amount=5`);
    expect(redactQuery(jwt)).toBe(redact(jwt));
  });

  it("an undecodable secret value is still redacted", () => {
    expect(redactQuery("password=%E0%A4%A")).toBe(`password=${redact("%E0%A4%A")}`);
  });

  // Regression test for a fixed bug (src/core/redact.ts): bearer.ts refuses `?bearer=<token>` as a token in the query string,
  // but SECRET_QUERY_KEYS has no "bearer", so the request log line carries the JWT in clear.
  it("redacts every query key that bearer.ts treats as a token (bearer=)", () => {
    const out = redactQuery(`bearer=${JWT}`);
    expect(out).not.toContain(JWT);
    expect(out).toBe(`bearer=${redact(JWT)}`);
  });

  it("the request log line of a request with a token in the query holds no token in clear", async () => {
    const entries: RequestLogEntry[] = [];
    const sandbox = await testSandbox({ frozenAt: Date.UTC(2026, 0, 1), onRequest: (e) => entries.push(e) });
    for (const key of ["access_token", "token", "jwt", "bearer"]) {
      const res = await sandbox.handle({
        method: "GET",
        path: "/api/v2/payment/status",
        query: `${key}=${JWT}`,
        headers: {},
        body: new Uint8Array(0),
      });
      expect(res.status).toBe(400);
      expect(res.body).not.toContain(JWT);
    }
    expect(entries).toHaveLength(4);
    for (const entry of entries) {
      expect(entry.code).toBe("token_in_query");
      expect(JSON.stringify(entry)).not.toContain(JWT);
    }
  });
});

describe("redactUrl with the secrets of loaded merchants", () => {
  const JWT2 = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl";
  const registry = () =>
    new MerchantRegistry([
      DEFAULT_MERCHANT,
      {
        id: "odd",
        apiKey: "odd-key",
        apiSecret: "s3cr3t+/=weird",
        paymentToken: "pt-odd-0123456789",
        login: { email: "o@x.test", password: "correct horse battery" },
      },
      {
        id: "short",
        apiKey: "short-key",
        apiSecret: "short-secret-123",
        paymentToken: "pt-short-0123456",
        login: { email: "s@x.test", password: "pw42" },
      },
    ]);

  it("leaves a URL with nothing secret as it came (same strings)", () => {
    const v = registry().secrets.view();
    expect(redactUrl("/api/v2/payment/status", "", v)).toEqual({ path: "/api/v2/payment/status", query: "" });
    expect(redactUrl("/api/v2/payment/a%20b+c", "page=2&q=%ZZ&x=caf%C3%A9", v)).toEqual({
      path: "/api/v2/payment/a%20b+c",
      query: "page=2&q=%ZZ&x=caf%C3%A9",
    });
  });

  it.each([
    ["a JWT inside a segment", `/p/x${JWT2};y`, "", `/p/x${redact(JWT2)};y`, ""],
    ["a JWT double-encoded", `/p/${JWT2.replace("e", "%2565")}`, "", `/p/${redact(JWT2)}`, ""],
    ["a payment token inside a query key", "/p", "xpt-odd-0123456789=1", "/p", `x${redact("pt-odd-0123456789")}=1`],
    ["a password with spaces, form-encoded", "/p", "q=correct+horse+battery", "/p", `q=${redact("correct horse battery")}`],
    ["a password with spaces, form-encoded then percent-encoded", "/p", "q=correct%2Bhorse%2Bbattery", "/p", `q=${redact("correct horse battery")}`],
    ["a secret with + / = in clear in a query value", "/p", "q=s3cr3t+/=weird", "/p", `q=${redact("s3cr3t+/=weird")}`],
    ["a short password as a whole segment", "/p/pw42", "", `/p/${redact("pw42")}`, ""],
    ["a short password as a whole query value", "/p", "x=pw42", "/p", `x=${redact("pw42")}`],
  ])("redacts %s", (_, path, query, shownPath, shownQuery) => {
    expect(redactUrl(path, query, registry().secrets.view())).toEqual({ path: shownPath, query: shownQuery });
  });

  it("a secret shorter than 8 characters is not looked for inside longer text (it would redact pieces of every URL)", () => {
    expect(MIN_ANYWHERE_LENGTH).toBe(8);
    expect(redactUrl("/p/apw42b", "x=pw42pw42", registry().secrets.view())).toEqual({ path: "/p/apw42b", query: "x=pw42pw42" });
  });

  it("a secret that spans path segments (it has a '/' in it) hides the whole path", () => {
    const path = "/p/s3cr3t+/=weird";
    expect(redactUrl(path, "", registry().secrets.view()).path).toBe(redact("/p/s3cr3t /=weird"));
  });

  it("forgets the secrets of a removed merchant (an ended session), and keeps a rotated-away api_secret while the merchant lives", () => {
    const r = registry();
    const m = r.findById("short")!;
    r.setApiSecret(m, "short-secret-rotated");
    expect(redactUrl("/p/short-secret-123/short-secret-rotated", "", r.secrets.view()).path).toBe(
      `/p/${redact("short-secret-123")}/${redact("short-secret-rotated")}`,
    );
    r.remove(m);
    expect(redactUrl("/p/short-secret-123/short-secret-rotated", "", r.secrets.view()).path).toBe("/p/short-secret-123/short-secret-rotated");
    // The default merchant's secrets are still there.
    expect(redactUrl("/p/sandbox-api-secret", "", r.secrets.view()).path).toBe(`/p/${redact("sandbox-api-secret")}`);
  });

  it("a view taken before a merchant went still redacts its secrets (its request's log line); a view taken after does not", () => {
    const r = registry();
    const before = r.secrets.view();
    r.remove(r.findById("short")!);
    const after = r.secrets.view();
    expect(redactUrl("/p/short-secret-123", "x=pw42", before)).toEqual({ path: `/p/${redact("short-secret-123")}`, query: `x=${redact("pw42")}` });
    expect(redactUrl("/p/short-secret-123", "x=pw42", after)).toEqual({ path: "/p/short-secret-123", query: "x=pw42" });
  });

  it("a view taken before the tables are rebuilt (leftovers outnumber held secrets) still redacts the removed secrets", () => {
    const r = registry();
    const before = r.secrets.view();
    r.remove(r.findById("odd")!);
    const between = r.secrets.view();
    r.remove(r.findById("short")!);
    const after = r.secrets.view();
    // 6 secrets removed, 3 still held: fewer than 6 leftovers means the tables were built anew.
    expect(r.secrets.leftoverCount).toBeLessThan(6);
    const odd = { path: "/p/pt-odd-0123456789/s3cr3t+/=weird", query: "q=correct+horse+battery" };
    const short = { path: "/p/short-secret-123/pt-short-0123456", query: "x=pw42" };
    const oddRedacted = { path: redact("/p/pt-odd-0123456789/s3cr3t /=weird"), query: `q=${redact("correct horse battery")}` };
    const shortRedacted = { path: `/p/${redact("short-secret-123")}/${redact("pt-short-0123456")}`, query: `x=${redact("pw42")}` };
    expect(redactUrl(odd.path, odd.query, before)).toEqual(oddRedacted);
    expect(redactUrl(short.path, short.query, before)).toEqual(shortRedacted);
    expect(redactUrl(odd.path, odd.query, between)).toEqual(odd);
    expect(redactUrl(short.path, short.query, between)).toEqual(shortRedacted);
    expect(redactUrl(odd.path, odd.query, after)).toEqual(odd);
    expect(redactUrl(short.path, short.query, after)).toEqual(short);
    // The held ones, in every view.
    for (const view of [before, between, after]) {
      expect(redactUrl("/p/sandbox-api-secret", "", view).path).toBe(`/p/${redact("sandbox-api-secret")}`);
    }
  });

  it("a secret added after a view was taken is redacted by the views taken since; that view is a snapshot, and unionOf with a later one sees it", () => {
    const r = registry();
    const before = r.secrets.view();
    r.add({ id: "late", apiKey: "late-key", apiSecret: "late-secret-0123456789", paymentToken: "pt-late-0123456789" });
    expect(redactUrl("/p/late-secret-0123456789", "", r.secrets.view()).path).toBe(`/p/${redact("late-secret-0123456789")}`);
    expect(redactUrl("/p/pt-late-0123456789", "", before).path).toBe("/p/pt-late-0123456789");
    expect(redactUrl("/p/pt-late-0123456789", "", unionOf(before, r.secrets.view())).path).toBe(`/p/${redact("pt-late-0123456789")}`);
  });

  it("regression: the secrets of 5,000 merchants added and removed one by one are not kept (leftovers stay below the held secrets)", () => {
    const r = registry();
    const held = r.all().length;
    for (let i = 0; i < 5000; i++) {
      const m = r.add({
        id: `m${i}`,
        apiKey: `k${i}`,
        apiSecret: `secret-${i}-0123456789`,
        paymentToken: `pt-${i}-0123456789`,
        login: { email: `${i}@x.test`, password: `pw-${i}-long-enough` },
      });
      r.secrets.view();
      r.remove(m);
    }
    expect(r.all()).toHaveLength(held);
    expect(r.secrets.has("secret-4999-0123456789")).toBe(false);
    expect(r.secrets.leftoverCount).toBeLessThanOrEqual(10);
    expect(redactUrl("/p/secret-4999-0123456789", "", r.secrets.view()).path).toBe("/p/secret-4999-0123456789");
    expect(redactUrl("/p/sandbox-api-secret", "", r.secrets.view()).path).toBe(`/p/${redact("sandbox-api-secret")}`);
  });

  it("bounded memory: a merchant that rotates its api_secret 100 times leaves the redaction only the secrets it still accepts", () => {
    const r = new MerchantRegistry([DEFAULT_MERCHANT]);
    const m = r.findById(DEFAULT_MERCHANT.id)!;
    const rotated = Array.from({ length: 100 }, (_, i) => `rotated-secret-${String(i).padStart(4, "0")}`);
    for (const s of rotated) r.setApiSecret(m, s);
    // The current one and the four it still accepts as proof of identity.
    expect(m.formerSecrets).toEqual(rotated.slice(95, 99));
    for (const s of rotated.slice(95)) expect(r.secrets.has(s)).toBe(true);
    for (const s of [DEFAULT_MERCHANT.apiSecret, ...rotated.slice(0, 95)]) expect(r.secrets.has(s)).toBe(false);
    expect(r.secrets.has(DEFAULT_MERCHANT.paymentToken)).toBe(true);
  });

  it("a secret two merchants share stays indexed until both are gone", () => {
    const index = new SecretIndex();
    index.add("shared-password");
    index.add("shared-password");
    index.delete("shared-password");
    expect(index.has("shared-password")).toBe(true);
    index.delete("shared-password");
    expect(index.has("shared-password")).toBe(false);
  });

  it("regression: a view taken earlier misses a secret added since at a new length, or after a rebuild; unionOf with the view of now sees both", () => {
    const index = new SecretIndex();
    index.add("first-secret-0123");
    const arrival = index.view();
    index.delete("first-secret-0123");
    index.add("a-later-secret-of-a-new-length-0123456789");
    const now = index.view();
    const path = "/p/first-secret-0123/a-later-secret-of-a-new-length-0123456789";
    expect(redactUrl(path, "", arrival).path).toBe(`/p/${redact("first-secret-0123")}/a-later-secret-of-a-new-length-0123456789`);
    expect(redactUrl(path, "", now).path).toBe(`/p/first-secret-0123/${redact("a-later-secret-of-a-new-length-0123456789")}`);
    expect(redactUrl(path, "", unionOf(arrival, now)).path).toBe(
      `/p/${redact("first-secret-0123")}/${redact("a-later-secret-of-a-new-length-0123456789")}`,
    );
    // Rebuilt tables (leftovers outnumbered the held secrets): the earlier view keeps the old ones,
    // so it misses even a secret of a length it knows.
    for (let i = 0; i < 5; i++) index.add(`short-lived-secret-${i}`);
    for (let i = 0; i < 5; i++) index.delete(`short-lived-secret-${i}`);
    index.add("after-rebuild-012");
    expect(redactUrl("/p/after-rebuild-012", "", arrival).path).toBe("/p/after-rebuild-012");
    expect(redactUrl("/p/after-rebuild-012", "", unionOf(arrival, index.view())).path).toBe(`/p/${redact("after-rebuild-012")}`);
  });

  it("unionOf a view with itself is that view", () => {
    const index = new SecretIndex();
    index.add("some-secret-0123");
    const view = index.view();
    expect(unionOf(view, view)).toBe(view);
  });
});
