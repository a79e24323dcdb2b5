import { createHmac, generateKeyPairSync, sign } from "node:crypto";
import { compactVerify, decodeProtectedHeader, type errors as joseErrors } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { signCompactJws } from "../../src/core/jws.js";
import { verifierOf, verifyCompactJws } from "../../src/core/jws-verify.js";
import { generateSigningKey, importSigningKey, type SigningKey } from "../../src/core/keys.js";

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

/** The token with its signature bytes changed by `change`. */
function withSignature(token: string, change: (signature: Buffer) => Buffer): string {
  const dot = token.lastIndexOf(".");
  return `${token.slice(0, dot)}.${change(Buffer.from(token.slice(dot + 1), "base64url")).toString("base64url")}`;
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

async function byNode(token: string, key: SigningKey): Promise<Outcome> {
  try {
    return { payload: Buffer.from(await verifyCompactJws(token, decodeProtectedHeader(token), key, verifierOf(key))).toString("latin1") };
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
      [
        "a signature one byte longer (a zero byte appended)",
        async (k) => withSignature(await signTexts(k, b64url({ alg, kid: k.kid }), b64url(claims)), (sig) => Buffer.concat([sig, Buffer.of(0)])),
      ],
      [
        "a signature one byte longer (a zero byte prepended)",
        async (k) => withSignature(await signTexts(k, b64url({ alg, kid: k.kid }), b64url(claims)), (sig) => Buffer.concat([Buffer.of(0), sig])),
      ],
      [
        "a signature one byte shorter",
        async (k) => withSignature(await signTexts(k, b64url({ alg, kid: k.kid }), b64url(claims)), (sig) => sig.subarray(0, -1)),
      ],
    ];
    let key: SigningKey;
    let other: SigningKey;
    beforeAll(async () => {
      [key, other] = [await generateSigningKey(alg), await generateSigningKey(alg)];
    });

    it.each(cases)("%s", async (_name, make) => {
      const token = await make(key, other);
      const jose = await byJose(token, key);
      expect(await byNode(token, key)).toEqual(jose);
    });

    it("the payload bytes of a token the sandbox issued", async () => {
      const token = await signCompactJws({ alg, kid: key.kid, typ: "at+jwt" }, claims, key);
      expect(JSON.parse(Buffer.from(await verifyCompactJws(token, decodeProtectedHeader(token), key, verifierOf(key))).toString("utf8"))).toEqual(
        claims,
      );
    });
  });
}

describe("verifyCompactJws: signature encodings jose judges on its own", () => {
  let rs: SigningKey;
  let es: SigningKey;
  beforeAll(async () => {
    [rs, es] = [await generateSigningKey("RS256"), await generateSigningKey("ES256")];
  });
  const same = async (token: string, key: SigningKey) => expect(await byNode(token, key)).toEqual(await byJose(token, key));

  it("an ES256 signature DER-encoded (JWS wants r||s, RFC 7518 §3.4)", async () => {
    const input = `${b64url({ alg: "ES256", kid: es.kid })}.${b64url(claims)}`;
    const der = sign("sha256", Buffer.from(input), { key: es.signer, dsaEncoding: "der" });
    await same(`${input}.${der.toString("base64url")}`, es);
  });

  it("an ES256 signature with high S (n - s): the same signature, malleated", async () => {
    // P-256's group order: (r, n - s) verifies wherever (r, s) does unless low S is demanded.
    const n = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
    const token = signTexts(es, b64url({ alg: "ES256", kid: es.kid }), b64url(claims));
    const malleated = withSignature(token, (sig) => {
      const s = BigInt(`0x${sig.subarray(32).toString("hex")}`);
      return Buffer.concat([sig.subarray(0, 32), Buffer.from((n - s).toString(16).padStart(64, "0"), "hex")]);
    });
    expect(malleated).not.toBe(token);
    await same(token, es);
    await same(malleated, es);
  });

  it("an RS256 signature whose first byte is zero, as signed and with the zero stripped", async () => {
    // About 1 signature in 256 starts with a zero byte: sign distinct payloads until one does.
    let token = "";
    for (let i = 0; !token; i++) {
      const t = signTexts(rs, b64url({ alg: "RS256", kid: rs.kid }), b64url({ ...claims, jti: `tok_${i}` }));
      if (Buffer.from(t.slice(t.lastIndexOf(".") + 1), "base64url")[0] === 0) token = t;
    }
    await same(token, rs);
    expect(await byNode(token, rs)).toHaveProperty("payload");
    await same(
      withSignature(token, (sig) => sig.subarray(1)),
      rs,
    );
  });

  it("an RSA key under 2048 bits: jose refuses its tokens, the sandbox refuses the key itself", async () => {
    const short = generateKeyPairSync("rsa", { modulusLength: 1024 });
    const input = `${b64url({ alg: "RS256" })}.${b64url(claims)}`;
    const token = `${input}.${sign("sha256", Buffer.from(input), short.privateKey).toString("base64url")}`;
    await expect(compactVerify(token, short.publicKey, { algorithms: ["RS256"] })).rejects.toThrow(TypeError);
    await expect(importSigningKey("RS256", short.privateKey.export({ type: "pkcs8", format: "pem" }) as string)).rejects.toThrow(
      /RS256 needs an RSA key of 2048 bits or more/,
    );
  });
});
