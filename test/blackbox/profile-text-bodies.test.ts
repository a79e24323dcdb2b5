import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliProcess, startCliServer } from "../support/cli.js";
import { postJson } from "../support/server.js";

/**
 * Issue 33, point 5: a profile may give a body that is not JSON (`text`), with its own content type:
 * a gateway's HTML page, Go's text/plain http.Error line. The sandbox sends the template's text as
 * written and escapes what it renders into HTML, so nothing a client sends becomes markup.
 */

const PROFILE = `name: text-bodies
codes:
  bearer_token_empty:
    status: 401
    contentType: text/html
    text: "<html>\\r\\n<head><title>401 Authorization Required</title></head>\\r\\n<body><p>{{path}}</p></body>\\r\\n</html>\\r\\n"
    wwwAuthenticate: omit
  token_malformed:
    status: 401
    text: "token is malformed: {{message}}\\n"
    message: "token contains an invalid number of segments"
    wwwAuthenticate: omit
protected:
  text: "ok {{merchant_id}}\\n"
`;

describe("a profile's text bodies", () => {
  const dir = mkdtempSync(join(tmpdir(), "text-bodies-"));
  let sandbox: CliProcess & { url: string };
  beforeAll(async () => {
    writeFileSync(join(dir, "text.yaml"), PROFILE);
    sandbox = await startCliServer(["--profile", join(dir, "text.yaml")]);
  });
  afterAll(async () => {
    sandbox.child.kill();
    await sandbox.exited;
    rmSync(dir, { recursive: true, force: true });
  });

  const call = (path: string, authorization: string) => fetch(`${sandbox.url}${path}`, { headers: { authorization } });
  /** Status, content type, challenge and body: the whole answer a client reads. */
  const whole = async (r: Response) => [r.status, r.headers.get("content-type"), r.headers.get("www-authenticate"), await r.text()];

  it("an HTML refusal: the page as written, the path rendered into it escaped", async () => {
    const r = await call("/api/v2/payment/a&b'c", "Bearer");
    expect(await whole(r)).toEqual([
      401,
      "text/html",
      null,
      "<html>\r\n<head><title>401 Authorization Required</title></head>\r\n<body><p>/api/v2/payment/a&amp;b&#39;c</p></body>\r\n</html>\r\n",
    ]);
  });

  it("a text/plain refusal (Go's http.Error): the message as text, utf-8 by default, nothing escaped", async () => {
    expect(await whole(await call("/api/v2/payment/p_1", "Bearer not-a-jwt"))).toEqual([
      401,
      "text/plain; charset=utf-8",
      null,
      "token is malformed: token contains an invalid number of segments\n",
    ]);
  });

  it("a text success answer", async () => {
    const token = await fetch(`${sandbox.url}/api/v2/auth/token`, postJson({ api_key: "sandbox-api-key", api_secret: "sandbox-api-secret" }));
    expect(token.status).toBe(200);
    const { access_token } = (await token.json()) as { access_token: string };
    const r = await call("/api/v2/payment/p_1", `Bearer ${access_token}`);
    expect(await whole(r)).toEqual([200, "text/plain; charset=utf-8", null, "ok merchant_sandbox_default\n"]);
  });
});
