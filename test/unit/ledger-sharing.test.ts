import { afterEach, describe, expect, it, vi } from "vitest";
import { type IssuedToken, TokenLedger } from "../../src/core/token-ledger.js";

/**
 * The token ledger as replicas share it: issue order that holds across ledgers on one host,
 * revocations as JSON, issued-token records taken and absorbed. Time is the wall clock faked by
 * vitest (the ledger orders by it); the token seconds are the frozen sandbox clock's.
 */

const WALL = Date.UTC(2026, 0, 1);
const SEC = Date.UTC(2026, 5, 1) / 1000;

afterEach(() => {
  vi.useRealTimers();
});

function token(jti: string, merchantId = "m1", issuedAt = SEC): IssuedToken {
  return { jti, merchantId, issuedAt, expiresAt: issuedAt + 900 };
}

/** A ledger as a replica that shares makes it. */
function sharing(): TokenLedger {
  const ledger = new TokenLedger();
  ledger.shareRecords();
  return ledger;
}

/** The jtis among `jtis` the ledger answers revoked (all issued at SEC to m1). */
function revokedOf(ledger: TokenLedger, jtis: string[]): string[] {
  return jtis.filter((jti) => ledger.isRevoked(jti, "m1", SEC));
}

describe.each([
  ["alone", () => new TokenLedger()],
  ["sharing", sharing],
])("issue order in one ledger (%s)", (_, make) => {
  it("a token issued right after a revoke-all, in the same second and millisecond, still works", () => {
    vi.useFakeTimers({ now: WALL, toFake: ["Date"] });
    const ledger = make();
    ledger.record(token("before"), SEC);
    ledger.revokeAllOf("m1", SEC);
    ledger.record(token("after"), SEC);
    expect(revokedOf(ledger, ["before", "after"])).toEqual(["before"]);
    ledger.expireAllOf("m1", SEC);
    ledger.record(token("later"), SEC);
    expect(["before", "after", "later"].map((jti) => ledger.expiredEarlyAt(jti, "m1", SEC))).toEqual([SEC, SEC, undefined]);
  });

  it("stays in order past a thousand tokens in one millisecond, and when the wall clock goes back", () => {
    vi.useFakeTimers({ now: WALL, toFake: ["Date"] });
    const ledger = make();
    const first = Array.from({ length: 1500 }, (_, i) => `t${i}`);
    for (const jti of first) ledger.record(token(jti), SEC);
    vi.setSystemTime(WALL - 60_000);
    ledger.revokeAllOf("m1", SEC);
    ledger.record(token("after"), SEC);
    expect(revokedOf(ledger, [...first, "after"])).toEqual(first);
  });
});

describe("issue order across ledgers (replicas on one host)", () => {
  it("a cutoff made on one replica covers the records made earlier on another, not those made later", () => {
    vi.useFakeTimers({ now: WALL, toFake: ["Date"] });
    const a = sharing();
    const b = sharing();
    a.record(token("a-early"), SEC);
    vi.setSystemTime(WALL + 1);
    b.revokeAllOf("m1", SEC);
    vi.setSystemTime(WALL + 2);
    a.record(token("a-late"), SEC);
    expect(b.absorbRecords(a.takeNewRecords(), SEC)).toBe(0);
    a.restoreRevocations(JSON.parse(JSON.stringify(b.revocationsState())));
    expect(revokedOf(a, ["a-early", "a-late"])).toEqual(["a-early"]);
    expect(revokedOf(b, ["a-early", "a-late"])).toEqual(["a-early"]);
  });

  it("a token issued after a replica saw another's cutoff is after it, even with the wall clock behind", () => {
    vi.useFakeTimers({ now: WALL + 5, toFake: ["Date"] });
    const b = sharing();
    b.revokeAllOf("m1", SEC);
    vi.setSystemTime(WALL);
    const a = sharing();
    a.restoreRevocations(b.revocationsState());
    a.record(token("after"), SEC);
    expect(a.isRevoked("after", "m1", SEC)).toBe(false);
    // Absorbing a record moves the order on too: a cutoff made here next covers it.
    const c = sharing();
    c.absorbRecords([JSON.stringify({ jti: "far", merchant: "m1", iat: SEC, exp: SEC + 900, order: (WALL + 9) * 1000 })], SEC);
    c.revokeAllOf("m1", SEC);
    expect(c.isRevoked("far", "m1", SEC)).toBe(true);
  });
});

describe("revocations as JSON", () => {
  it("a restored state reads back as the same text, and answers as the ledger it came from", () => {
    vi.useFakeTimers({ now: WALL, toFake: ["Date"] });
    const a = sharing();
    for (const jti of ["t1", "t2", "t3"]) a.record(token(jti), SEC);
    a.revoke("t2");
    a.expire("t3", SEC + 10);
    a.revokeAllOf("m2", SEC);
    a.expireAllOf("m3", SEC + 5);
    const json = JSON.stringify(a.revocationsState());
    expect(JSON.parse(json)).toEqual({
      revoked: ["t2"],
      revokedAll: [["m2", WALL * 1000 + 3, SEC, SEC]],
      expiredEarly: [["t3", SEC + 10]],
      expiredAll: [["m3", WALL * 1000 + 4, SEC + 5, SEC + 5]],
    });
    const b = sharing();
    b.revoke("only-here");
    b.restoreRevocations(JSON.parse(json));
    expect(JSON.stringify(b.revocationsState())).toBe(json);
    expect(b.isRevoked("t2", "m1", SEC)).toBe(true);
    expect(b.isRevoked("only-here", "m1", SEC)).toBe(false);
    expect(b.expiredEarlyAt("t3", "m1", SEC)).toBe(SEC + 10);
    // No record here: judged by its second of issue, as a ledger judges a token it has no record of.
    expect(b.isRevoked("x", "m2", SEC)).toBe(true);
    expect(b.isRevoked("x", "m2", SEC + 1)).toBe(false);
    expect(b.expiredEarlyAt("y", "m3", SEC + 5)).toBe(SEC + 5);
    b.forgetMerchant("m2");
    expect(b.revocationsState().revokedAll).toEqual([]);
  });

  it("refuses a state that is not one, saying which part, and keeps its own", () => {
    const ledger = new TokenLedger();
    ledger.revoke("kept");
    const bad = { revoked: ["a"], revokedAll: [["m1", 1.5, 0, 0]], expiredEarly: [], expiredAll: [] };
    expect(() => ledger.restoreRevocations(bad as never)).toThrow(
      new TypeError(
        "a token ledger's revocations state needs revokedAll: a list of [merchantId, order, upTo, at]; give what TokenLedger.revocationsState() returned",
      ),
    );
    expect(() => ledger.restoreRevocations({ revoked: "a" } as never)).toThrow(/needs revoked: a list of jtis/);
    expect(ledger.revocationsState().revoked).toEqual(["kept"]);
  });
});

describe("issued-token records shared", () => {
  it("without shareRecords nothing is kept to take", () => {
    const ledger = new TokenLedger();
    ledger.record(token("t1"), SEC);
    expect(ledger.takeNewRecords()).toEqual([]);
  });

  it("takes each record made once, as JSON, and another ledger absorbs it once", () => {
    vi.useFakeTimers({ now: WALL, toFake: ["Date"] });
    const a = new TokenLedger();
    a.record(token("before-sharing"), SEC);
    // From here on, orders follow the wall clock.
    a.shareRecords();
    a.record(token("t1"), SEC);
    a.record(token("t2", "m2", SEC + 1), SEC);
    const taken = a.takeNewRecords();
    expect(taken).toEqual([
      `{"jti":"t1","merchant":"m1","iat":${SEC},"exp":${SEC + 900},"order":${WALL * 1000}}`,
      `{"jti":"t2","merchant":"m2","iat":${SEC + 1},"exp":${SEC + 901},"order":${WALL * 1000 + 1}}`,
    ]);
    expect(a.takeNewRecords()).toEqual([]);
    const b = sharing();
    expect(b.absorbRecords(taken, SEC)).toBe(0);
    expect(b.absorbRecords(taken, SEC)).toBe(0);
    expect(b.size).toBe(2);
    expect(b.get("t2")).toEqual({ jti: "t2", merchantId: "m2", issuedAt: SEC + 1, expiresAt: SEC + 901 });
    // Absorbed records are others' to share, not this ledger's.
    expect(b.takeNewRecords()).toEqual([]);
  });

  it("ignores what is not a record, and counts it, without losing the others", () => {
    const ledger = new TokenLedger();
    const good = JSON.stringify({ jti: "ok", merchant: "m1", iat: SEC, exp: SEC + 900, order: 7 });
    const bad = [
      "{",
      "null",
      "[]",
      JSON.stringify({ jti: "", merchant: "m1", iat: SEC, exp: SEC, order: 1 }),
      JSON.stringify({ jti: "x", merchant: "m1", iat: SEC, exp: SEC, order: 0.5 }),
    ];
    expect(ledger.absorbRecords([...bad, good], SEC)).toBe(5);
    expect(ledger.size).toBe(1);
    expect(ledger.get("ok")?.merchantId).toBe("m1");
  });

  it("stays bounded as its own records do: expired ones go first", () => {
    const ledger = new TokenLedger(4);
    const records = Array.from({ length: 6 }, (_, i) =>
      JSON.stringify({ jti: `t${i}`, merchant: "m1", iat: SEC, exp: i < 2 ? SEC + 1 : SEC + 900, order: i + 1 }),
    );
    ledger.absorbRecords(records, SEC + 10);
    expect(ledger.size).toBe(4);
    expect(ledger.get("t0")).toBeUndefined();
    expect(ledger.get("t5")?.jti).toBe("t5");
  });

  it("clear drops the records not taken yet", () => {
    const ledger = new TokenLedger();
    ledger.shareRecords();
    ledger.record(token("t1"), SEC);
    ledger.clear();
    expect(ledger.takeNewRecords()).toEqual([]);
  });
});
