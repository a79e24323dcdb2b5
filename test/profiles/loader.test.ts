import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BUILT_IN_PROFILES } from "../../src/profiles/builtins.js";
import { parseProfileText, ProfileLoadError, resolveProfile, validateProfile } from "../../src/profiles/load.js";
import { profileJsonSchema } from "../../src/profiles/schema.js";

/** The profile loader: located problems (file:line:column), did-you-mean, nothing half-loads. */

function problemsOf(text: string): string[] {
  try {
    parseProfileText(text, "acme.yaml");
  } catch (e) {
    expect(e).toBeInstanceOf(ProfileLoadError);
    return (e as Error).message.split("\n");
  }
  throw new Error("the profile loaded");
}

describe("the profile loader", () => {
  it("reads a valid profile file", () => {
    const profile = parseProfileText(
      [
        "name: acme",
        "token:",
        "  body:",
        "    result:",
        '      accessToken: "{{access_token}}"',
        '      validity: "{{expires_in_minutes}}"',
        "codes:",
        "  wrong_api_secret: { code: INVALID_CREDENTIALS, status: 403 }",
      ].join("\n"),
      "acme.yaml",
    );
    expect(profile).toEqual({
      name: "acme",
      token: { body: { result: { accessToken: "{{access_token}}", validity: "{{expires_in_minutes}}" } } },
      codes: { wrong_api_secret: { code: "INVALID_CREDENTIALS", status: 403 } },
    });
  });

  it("places an unknown key at its line and column, with did-you-mean and the allowed keys", () => {
    expect(problemsOf("name: acme\nrefusal:\n  wwwAuthenticat: omit\n")).toEqual([
      "acme.yaml:3:3: refusal.wwwAuthenticat: unknown key 'wwwAuthenticat'; did you mean 'wwwAuthenticate'? (allowed here: message, contentType, body, text, empty, wwwAuthenticate, headers, groups)",
    ]);
    expect(problemsOf("name: acme\ntokn:\n  body: {}\n")[0]).toMatch(
      /^acme\.yaml:2:1: tokn: unknown key 'tokn'; did you mean 'token'\? \(allowed here: \$schema, name, /,
    );
  });

  it("framing stays the server's: a profile's token headers may not set Content-Length, Transfer-Encoding or a hop-by-hop header", () => {
    expect(
      problemsOf("name: acme\ntoken:\n  headers:\n    X-Acme-Env: test\n    Content-Length: '777'\n    Keep-Alive: timeout=5\n  body: {}\n"),
    ).toEqual([
      "acme.yaml:5:5: token.headers.Content-Length: 'Content-Length' cannot be scripted: the server sets it from the body. Remove it from the headers",
      "acme.yaml:6:5: token.headers.Keep-Alive: 'Keep-Alive' cannot be scripted: a hop-by-hop header: the server manages its connections. Remove it from the headers",
    ]);
  });

  it("refuses an unknown placeholder where it is, suggesting the nearest", () => {
    expect(problemsOf('name: acme\ntoken:\n  body:\n    t: "{{acces_token}}"\n')).toEqual([
      "acme.yaml:4:8: token.body.t: unknown placeholder '{{acces_token}}'; did you mean 'access_token'? (token.body may use: request_id, now, method, path, route, count_down, count_up, fresh, status, status_text, access_token, token_type, expires_in, expires_in_minutes, expires_at, expires_at_unix, issued_at, scope, refresh_token, id_token)",
    ]);
    // Each part has its own names: a token's placeholder is unknown in a refusal.
    expect(problemsOf('name: acme\nrefusal:\n  body: { m: "Error: {{expires_in}}" }\n')).toEqual([
      "acme.yaml:3:14: refusal.body.m: unknown placeholder '{{expires_in}}' (refusal.body may use: request_id, now, method, path, route, count_down, count_up, fresh, status_text, explanation, error_description, token_expires_at, code, sandbox_code, message, status, error, instance)",
    ]);
  });

  it("the client claim may be renamed or dropped, not dropped under typ JWT, and its name is then the sandbox's", () => {
    expect(problemsOf("name: acme\njwt:\n  typ: JWT\n  clientClaim: none\n")).toEqual([
      "acme.yaml:4:16: jwt.clientClaim: clientClaim none needs another typ than JWT: the deprecated login's tokens are typ JWT, and without a client claim an access token could not be told from one (keep client_id, or the provider's name for it)",
    ]);
    expect(problemsOf("name: acme\njwt:\n  clientClaim: azp\n  scopeClaim: scp\n  claims: { azp: x, scp: y }\n")).toEqual([
      "acme.yaml:5:13: jwt.claims.azp: jwt.claims may not set 'azp': the sandbox writes and reads it itself; reserved: iss, sub, aud, iat, exp, nbf, jti, client_id, scope. Remove it from claims",
      "acme.yaml:5:21: jwt.claims.scp: jwt.claims may not set 'scp': the sandbox writes and reads it itself; reserved: iss, sub, aud, iat, exp, nbf, jti, client_id, scope. Remove it from claims",
    ]);
  });

  it("a counter needs its limit to count down from, and a whole number as its limit or start", () => {
    expect(
      problemsOf('name: acme\nheaders:\n  X-RateLimit-Remaining: "{{count_down}}"\n  X-Used: "{{count_up:-1}}"\n  X-Left: "{{count_down:0}}"\n'),
    ).toEqual([
      "acme.yaml:3:26: headers.X-RateLimit-Remaining: '{{count_down}}' needs the limit it counts down from: write {{count_down:60}} (the first answer says 59)",
      "acme.yaml:4:11: headers.X-Used: '{{count_up:-1}}': the start must be a whole number from 0 to 1000000000, such as {{count_up:0}}",
      "acme.yaml:5:11: headers.X-Left: '{{count_down:0}}': the limit must be a whole number from 1 to 1000000000, such as {{count_down:60}}",
    ]);
  });

  it("refuses a codes key that is not a sandbox code, with did-you-mean", () => {
    expect(problemsOf("name: acme\ncodes:\n  wrong_api_secrt: { code: X }\n")).toEqual([
      "acme.yaml:3:3: codes.wrong_api_secrt: 'wrong_api_secrt' is not a code of the sandbox; did you mean 'wrong_api_secret'? (`merchant-sandbox errors` lists them)",
    ]);
  });

  it("unbounded durations: a jwt.ttl past ten years is refused at its file:line", () => {
    expect(problemsOf("name: acme\njwt:\n  ttl: 1e30\n")).toEqual(["acme.yaml:3:8: jwt.ttl: must be at most 3650d (ten years)"]);
    expect(problemsOf("name: acme\njwt:\n  ttl: 3651d\n")).toEqual(["acme.yaml:3:8: jwt.ttl: must be at most 3650d (ten years)"]);
  });

  it("reports every problem at once, in file order, and loads nothing", () => {
    expect(problemsOf('name: Acme\njwt:\n  alg: RS255\n  ttl: soon\nlogin:\n  body: "{{nope}}"\n')).toEqual([
      "acme.yaml:1:7: name: name may use lower-case letters, digits and '-' only, like acme-pay",
      "acme.yaml:3:8: jwt.alg: 'RS255' is not a supported algorithm; did you mean 'RS256'? (use one of: RS256, ES256, HS256)",
      "acme.yaml:4:8: jwt.ttl: must be a duration such as 90s, 59m, 1h or 1h30m",
      "acme.yaml:6:9: login.body: unknown placeholder '{{nope}}' (login.body may use: request_id, now, method, path, route, count_down, count_up, fresh, status, status_text, access_token, token_type, expires_in, expires_in_minutes, expires_at, expires_at_unix, issued_at, scope, refresh_token, id_token)",
    ]);
  });

  it("reports YAML syntax problems, duplicate keys and keys that are not names, located", () => {
    expect(problemsOf("name: acme\nname: other\n")).toEqual([
      "acme.yaml:2:1: the key 'name' appears twice in the same mapping (first on line 1); keep one",
    ]);
    expect(problemsOf("name: acme\n[a, b]: 1\n")).toEqual([
      "acme.yaml:2:1: this key is a list ('[a, b]'), but a profile's keys are names such as token or body; write the key as plain text",
    ]);
  });

  it("resolves a built-in by name, suggests one for a typo, and reads a file by path", () => {
    expect(resolveProfile("lexik", "--profile")).toBe(BUILT_IN_PROFILES.lexik);
    expect(() => resolveProfile("lexk", "--profile")).toThrow(
      "--profile: 'lexk' is not a built-in profile; did you mean 'lexik'? (built-in: oauth, lexik, spring, laravel, camel, envelope); or give the path of a profile file (.yaml, .yml or .json)",
    );
    const dir = mkdtempSync(join(tmpdir(), "profile-"));
    writeFileSync(join(dir, "acme.json"), JSON.stringify({ name: "acme", refusal: { wwwAuthenticate: "omit" } }));
    expect(resolveProfile("acme.json", "--profile", dir)).toEqual({ name: "acme", refusal: { wwwAuthenticate: "omit" } });
    expect(() => resolveProfile("missing.yaml", "--profile", dir)).toThrow(
      `${join(dir, "missing.yaml")}:1:1: cannot read the profile file (no such file)`,
    );
  });

  it("validates profile objects too (createSandbox({ profile }))", () => {
    expect(() => validateProfile({ name: "x", token: { body: "{{bogus}}" } }, "createSandbox profile")).toThrow(
      "createSandbox profile:1:1: token.body: unknown placeholder '{{bogus}}'",
    );
  });

  it("every built-in profile is valid under the schema", () => {
    for (const profile of Object.values(BUILT_IN_PROFILES)) expect(validateProfile(profile, profile.name)).toEqual(profile);
  });

  it("the profile example of docs/profiles.md loads", () => {
    const page = readFileSync(new URL("../../docs/profiles.md", import.meta.url), "utf8");
    const example = /```yaml\n(# acme\.yaml[\s\S]*?)```/.exec(page)?.[1];
    expect(example).toBeDefined();
    expect(parseProfileText(example!, "docs/profiles.md").name).toBe("acme");
  });

  it("the calibrated profiles docs/profiles.md shows whole all load, the Keycloak and the recorded one among them", () => {
    const page = readFileSync(new URL("../../docs/profiles.md", import.meta.url), "utf8");
    const section = page.slice(page.indexOf("### Four calibrated profiles, whole"), page.indexOf("### Checking it every night"));
    const names = [...section.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => parseProfileText(m[1]!, "docs/profiles.md").name);
    expect(names).toEqual(["acme-spring", "acme-lexik", "acme-keycloak", "acme-gateway"]);
  });

  it("profiles/profile.schema.json is the current profileJsonSchema()", () => {
    const checkedIn = JSON.parse(readFileSync(new URL("../../profiles/profile.schema.json", import.meta.url), "utf8"));
    expect(checkedIn, "profiles/profile.schema.json is out of date: run `npm run schema` and commit the result").toEqual(profileJsonSchema());
  });
});
