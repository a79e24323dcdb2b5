import { createHmac, sign } from "node:crypto";
import { compactVerify, decodeProtectedHeader, type errors as joseErrors } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { signCompactJws } from "../../src/core/jws.js";
import { verifierOf, verifyCompactJws } from "../../src/core/jws-verify.js";
import { generateSigningKey, type SigningKey } from "../../src/core/keys.js";

// The sandbox checks signatures with node:crypto (jws-verify.ts) and refuses what jose's
// compactVerify refuses: every token below gets the same answer from both, the same payload bytes
// or the same jose error class.
const claims = { iss: "https://merchant-sandbox.test", sub: "m_1", aud: "merchant-api", iat: 1767225600, exp: 1767229200, jti: "tok_1" };
const b64url = (value: unknown) => Buffer.from(typeof value === "string" ? value : JSON.stringify(value)).toString("base64url");

/** The token signed as it is written (header and payload texts as given), with the key's algorithm. */
function signTexts(key: SigningKey, headerText: string, payloadText: string): string {
  const input = `${headerText}.${payloadText}`;
  if (key.alg === "HS256") return `${input}.${createHmac("sha256", key.signer).update(input).digest("base64url")}`;
  const signature = sign("sha256", Buffer.from(input), key.alg === "ES256" ? { key: key.signer, dsaEncoding: "ieee-p1363" } : key.signer);
  return `${input}.${signature.toString("base64url")}`;
}

type Outcome = { payload: string } | { error: string };

async function byJose(token: string, key: SigningKey): Promise<Outcome> {
  try {
    const { payload } = await compactVerify(token, key.verifyKey, { algorithms: [key.alg] });
    return { payload: Buffer.from(payload).toString("latin1") };
  } catch (e) {
    return { error: (e as joseErrors.JOSEError).code };
  }
}

function byNode(token: string, key: SigningKey): Outcome {
  try {
    return { payload: Buffer.from(verifyCompactJws(token, decodeProtectedHeader(token), key, verifierOf(key))).toString("latin1") };
  } catch (e) {
    return { error: (e as joseErrors.JOSEError).code };
  }
}

for (const alg of ["RS256", "ES256", "HS256"] as const) {
  describe(`verifyCompactJws ${alg}: the answer jose's compactVerify gives`, () => {
    const cases: Array<[string, (key: SigningKey, other: SigningKey) => string | Promise<string>]> = [
      ["a token the key signed", (k) => signTexts(k, b64url({ alg, kid: k.kid }), b64url(claims))],
      ["a token another key signed", (_k, o) => signTexts(o, b64url({ alg, kid: o.kid }), b64url(claims))],
      [
        "an altered payload",
        async (k) => {
          const [h, , s] = (await signTexts(k, b64url({ alg, kid: k.kid }), b64url(claims))).split(".");
          return `${h}.${b64url({ ...claims, sub: "m_2" })}.${s}`;
        },
      ],
      ["an empty signature", async (k) => `${b64url({ alg, kid: k.kid })}.${b64url(claims)}.`],
      [
        "a signature one character short (no bytes have that length)",
        async (k) => {
          const t = await signTexts(k, b64url({ alg, kid: k.kid }), b64url(claims));
          const sig = t.split(".")[2]!;
          const cut = sig.length % 4 === 2 ? sig.slice(0, -1) : sig.length % 4 === 0 ? sig + "A" : sig.slice(0, -2);
          return `${t.slice(0, t.lastIndexOf("."))}.${cut}`;
        },
      ],
      [
        "a payload whose length no bytes have, signed",
        (k) => signTexts(k, b64url({ alg, kid: k.kid }), `${b64url(claims)}AAAAA`.slice(0, 4 * 20 + 1)),
      ],
      ["crit naming an unknown parameter, signed", (k) => signTexts(k, b64url({ alg, kid: k.kid, crit: ["x"], x: 1 }), b64url(claims))],
      ["crit naming an unknown parameter, unsigned", async (k) => `${b64url({ alg, kid: k.kid, crit: ["exp"], exp: 1 })}.${b64url(claims)}.AAAA`],
      ["crit empty", (k) => signTexts(k, b64url({ alg, kid: k.kid, crit: [] }), b64url(claims))],
      ["crit not an array", (k) => signTexts(k, b64url({ alg, kid: k.kid, crit: "b64", b64: true }), b64url(claims))],
      ["crit with an empty name", (k) => signTexts(k, b64url({ alg, kid: k.kid, crit: [""] }), b64url(claims))],
      ["crit b64 without b64", (k) => signTexts(k, b64url({ alg, kid: k.kid, crit: ["b64"] }), b64url(claims))],
      ["crit b64 with a string b64", (k) => signTexts(k, b64url({ alg, kid: k.kid, crit: ["b64"], b64: "no" }), b64url(claims))],
      ["crit b64, b64 false: the payload as sent", (k) => signTexts(k, b64url({ alg, kid: k.kid, crit: ["b64"], b64: false }), "plainText_-123")],
      ["crit b64, b64 true", (k) => signTexts(k, b64url({ alg, kid: k.kid, crit: ["b64"], b64: true }), b64url(claims))],
      ["crit b64 twice", (k) => signTexts(k, b64url({ alg, kid: k.kid, crit: ["b64", "b64"], b64: true }), b64url(claims))],
      ["b64 false without crit (ignored)", (k) => signTexts(k, b64url({ alg, kid: k.kid, b64: false }), b64url(claims))],
      ["alg not a string", (k) => signTexts(k, b64url({ alg: [alg], kid: k.kid }), b64url(claims))],
      ["an empty payload", (k) => signTexts(k, b64url({ alg, kid: k.kid }), "")],
    ];
    let key: SigningKey;
    let other: SigningKey;
    beforeAll(async () => {
      [key, other] = [await generateSigningKey(alg), await generateSigningKey(alg)];
    });

    it.each(cases)("%s", async (_name, make) => {
      const token = await make(key, other);
      const jose = await byJose(token, key);
      if (process.env.SHOW) console.log(alg, _name, jose);
      expect(byNode(token, key)).toEqual(jose);
    });

    it("the payload bytes of a token the sandbox issued", async () => {
      const token = await signCompactJws({ alg, kid: key.kid, typ: "at+jwt" }, claims, key);
      expect(JSON.parse(Buffer.from(verifyCompactJws(token, decodeProtectedHeader(token), key, verifierOf(key))).toString("utf8"))).toEqual(claims);
    });
  });
}
