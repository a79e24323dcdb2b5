// The reference: bare node:http doing the same JWT work as the sandbox, and nothing else.
// Parses the JSON body, checks the credentials, signs with the same algorithm and key type
// (imported once), verifies bearer tokens, answers 404 elsewhere. No scenarios, no journal, no
// problem bodies: the floor the sandbox is measured against.
import { createServer } from "node:http";
import { SignJWT, generateKeyPair, jwtVerify } from "jose";
import { KeyObject, createHmac, randomUUID, sign as signSync } from "node:crypto";

const alg = process.env.BENCH_ALG ?? "RS256";
const { privateKey, publicKey } =
  alg === "HS256"
    ? await (async () => {
        const key = await crypto.subtle.importKey("raw", crypto.getRandomValues(new Uint8Array(32)), { name: "HMAC", hash: "SHA-256" }, true, [
          "sign",
          "verify",
        ]);
        return { privateKey: key, publicKey: key };
      })()
    : await generateKeyPair(alg);

// BENCH_SIGN=sync: the single-threaded bare server of issue 15's token-exchange target. Each token
// is signed with node:crypto's synchronous sign on the event loop's thread, so signing uses one core
// (jose's WebCrypto signing, the default, runs on libuv's thread pool: every core).
const syncSigning = process.env.BENCH_SIGN === "sync";
const syncKey = syncSigning && alg !== "HS256" ? KeyObject.from(privateKey) : undefined;
const hmacKey = syncSigning && alg === "HS256" ? Buffer.from(await crypto.subtle.exportKey("raw", privateKey)) : undefined;
function signTokenSync(claims) {
  const input = `${Buffer.from(JSON.stringify({ alg, typ: "at+jwt", kid: "k" })).toString("base64url")}.${Buffer.from(JSON.stringify(claims)).toString("base64url")}`;
  const signature =
    alg === "HS256"
      ? createHmac("sha256", hmacKey).update(input).digest()
      : signSync("sha256", Buffer.from(input), alg === "ES256" ? { key: syncKey, dsaEncoding: "ieee-p1363" } : syncKey);
  return `${input}.${signature.toString("base64url")}`;
}

const json = (res, status, body) => {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store", "content-length": Buffer.byteLength(text) });
  res.end(text);
};

const server = createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", async () => {
    try {
      if (req.url === "/api/v2/auth/token" && req.method === "POST") {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}");
        if (body.api_key !== "sandbox-api-key" || body.api_secret !== "sandbox-api-secret") return json(res, 401, { error: "invalid_client" });
        const now = Math.floor(Date.now() / 1000);
        if (syncSigning) {
          const claims = {
            sub: "m",
            scope: "payment cashout",
            jti: randomUUID(),
            iat: now,
            exp: now + 3600,
            iss: "https://merchant-sandbox.test",
            aud: "merchant-api",
          };
          return json(res, 200, { access_token: signTokenSync(claims), token_type: "Bearer", expires_in: 3600 });
        }
        const token = await new SignJWT({ sub: "m", scope: "payment cashout", jti: randomUUID() })
          .setProtectedHeader({ alg, typ: "at+jwt", kid: "k" })
          .setIssuedAt(now)
          .setExpirationTime(now + 3600)
          .setIssuer("https://merchant-sandbox.test")
          .setAudience("merchant-api")
          .sign(privateKey);
        return json(res, 200, { access_token: token, token_type: "Bearer", expires_in: 3600 });
      }
      if (req.url.startsWith("/api/v2/payment/init")) {
        if (req.headers.authorization !== "Bearer sandbox-payment-token") return json(res, 401, { error: "invalid_token" });
        return json(res, 201, { payment_id: `pay_${randomUUID()}` });
      }
      if (req.url.startsWith("/api/v2/payment/") || req.url.startsWith("/api/v2/cashout/")) {
        const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
        if (!token) return json(res, 401, { error: "invalid_request" });
        const { payload } = await jwtVerify(token, publicKey, {
          algorithms: [alg],
          issuer: "https://merchant-sandbox.test",
          audience: "merchant-api",
        });
        return json(res, 200, { merchant_id: payload.sub, operation: `${req.method} ${req.url}` });
      }
      if (req.url === "/__sandbox/health") return json(res, 200, { status: "ok" });
      return json(res, 404, { error: "not_found" });
    } catch {
      json(res, 401, { error: "invalid_token" });
    }
  });
});
server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  process.stdout.write(`listening on http://127.0.0.1:${server.address().port}\n`);
});
for (const s of ["SIGTERM", "SIGINT"]) process.on(s, () => server.close(() => process.exit(0)));
