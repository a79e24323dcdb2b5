import { Outbox } from "./outbox.js";

/**
 * What the sandbox remembers about the tokens it issued: which are revoked or expired early (by a
 * scenario rule or the library API), one by one or all of a merchant's at once. Bounded: records
 * of tokens past their expiry are dropped, since an expired token is refused as expired before
 * anything else is looked at.
 *
 * "All of a merchant's tokens" means the tokens issued before the call, counted by issue order, not
 * by second: with a frozen clock a token issued right after a revocation has the same `iat` as the
 * revoked ones, and must still work. The order is a number each record and cutoff takes when made,
 * strictly increasing in one ledger; once it shares its records, comparable across the ledgers of
 * replicas on one host too: wall-clock milliseconds times ORDERS_PER_MS, or one more than the last
 * number this ledger made or saw, if that is more (see `nextOrder`).
 */
export interface IssuedToken {
  jti: string;
  merchantId: string;
  issuedAt: number;
  expiresAt: number;
}

/** Kept per issued token, by jti (so the jti is not stored twice). */
interface Recorded {
  merchantId: string;
  issuedAt: number;
  expiresAt: number;
  order: number;
}

/** Everything made before `order` (or, for tokens without a record, up to second `upTo`). */
interface Cutoff {
  order: number;
  upTo: number;
  /** For early expiry: the second the tokens expired. */
  at: number;
}

/** A merchant's cutoff as shared: [merchantId, order, upTo, at]. */
export type CutoffState = readonly [merchantId: string, order: number, upTo: number, at: number];

/**
 * The revocations and early expiries of a ledger as replicas share them (JSON): small, as it holds
 * no issued-token record. Lists keep the ledger's own order, so one state always reads the same.
 */
export interface RevocationsState {
  readonly revoked: readonly string[];
  readonly revokedAll: readonly CutoffState[];
  readonly expiredEarly: ReadonlyArray<readonly [jti: string, at: number]>;
  readonly expiredAll: readonly CutoffState[];
}

/** How many orders a ledger makes per wall-clock millisecond before it borrows from the next one. */
const ORDERS_PER_MS = 1000;

export class TokenLedger {
  private readonly issued = new Map<string, Recorded>();
  /** The last order made or seen (see nextOrder). */
  private lastOrder = 0;
  /**
   * The JSON of records made, on their way to a commit (`takeNewRecords`); closed until
   * `shareRecords`, and until then orders are counted without reading the wall clock.
   */
  private readonly newRecords = new Outbox<string, { minted: boolean; jti: string }>();
  private readonly revoked = new Set<string>();
  private readonly revokedAll = new Map<string, Cutoff>();
  private readonly expiredEarly = new Map<string, number>();
  private readonly expiredAll = new Map<string, Cutoff>();

  /**
   * @param maxRecords About 100 bytes each. Past it, expired records go, then the oldest half; a
   * token without a record is still judged by revocations, by its second of issue.
   */
  constructor(private readonly maxRecords = 20_000) {}

  /** `minted`: made by the control plane's minting, not issued by the exchange or the login. */
  record(token: IssuedToken, nowSeconds: number, minted = false): void {
    if (this.issued.size >= this.maxRecords) this.prune(nowSeconds);
    const order = this.nextOrder();
    this.issued.set(token.jti, { merchantId: token.merchantId, issuedAt: token.issuedAt, expiresAt: token.expiresAt, order });
    if (!this.newRecords.isOpen) return;
    // The request that issued it carries it in its own commit; one outside any request waits here.
    this.newRecords.put(recordJson(token, order), { minted, jti: token.jti });
  }

  /**
   * How many lookups found no record: a replica sharing its state compares it before and after a
   * request, to know whether records other replicas appended meanwhile could have changed its answer.
   */
  missed = 0;

  get(jti: string): IssuedToken | undefined {
    const r = this.issued.get(jti);
    if (!r) this.missed++;
    return r && { jti, merchantId: r.merchantId, issuedAt: r.issuedAt, expiresAt: r.expiresAt };
  }

  get size(): number {
    return this.issued.size;
  }

  revoke(jti: string): void {
    this.revoked.add(jti);
  }

  /** Revokes every token the merchant holds now; tokens issued later are not affected. */
  revokeAllOf(merchantId: string, nowSeconds: number): void {
    this.revokedAll.set(merchantId, { order: this.nextOrder(), upTo: nowSeconds, at: nowSeconds });
  }

  isRevoked(jti: string, merchantId: string, issuedAt: number): boolean {
    return this.revoked.has(jti) || this.covers(this.revokedAll.get(merchantId), jti, issuedAt);
  }

  /** Makes one token expire at `atSeconds`, before its exp. */
  expire(jti: string, atSeconds: number): void {
    this.expiredEarly.set(jti, atSeconds);
  }

  /** Makes every token the merchant holds now expire at `atSeconds`. */
  expireAllOf(merchantId: string, atSeconds: number): void {
    this.expiredAll.set(merchantId, { order: this.nextOrder(), upTo: atSeconds, at: atSeconds });
  }

  /** When the token was made to expire early, if it was. */
  expiredEarlyAt(jti: string, merchantId: string, issuedAt: number): number | undefined {
    const own = this.expiredEarly.get(jti);
    if (own !== undefined) return own;
    const all = this.expiredAll.get(merchantId);
    return all && this.covers(all, jti, issuedAt) ? all.at : undefined;
  }

  /**
   * Forgets a merchant that is gone for good (its session ended; session merchant ids carry the
   * session's random id, so none comes back). Its tokens are refused as of an unknown merchant
   * before the ledger is asked, so nothing it answers changes. Per-token records age out as usual.
   */
  forgetMerchant(merchantId: string): void {
    this.revokedAll.delete(merchantId);
    this.expiredAll.delete(merchantId);
  }

  /** How many merchants have a "revoke all" or "expire all" cutoff: bounded by the merchants alive. */
  get merchantCutoffs(): number {
    return this.revokedAll.size + this.expiredAll.size;
  }

  /**
   * The revocations and early expiries (not the issued-token records, which are shared one by one:
   * `takeNewRecords`). Revoked jtis and cutoffs in the order they came, so the JSON of one state
   * is always the same text.
   */
  revocationsState(): RevocationsState {
    return {
      revoked: [...this.revoked],
      revokedAll: cutoffStates(this.revokedAll),
      expiredEarly: [...this.expiredEarly],
      expiredAll: cutoffStates(this.expiredAll),
    };
  }

  /**
   * Replaces the revocations and early expiries with another replica's (`revocationsState`). The
   * records stay; tokens recorded here after this are ordered after its cutoffs.
   */
  restoreRevocations(state: RevocationsState): void {
    const problem = revocationsProblem(state);
    if (problem) throw new TypeError(`a token ledger's revocations state ${problem}; give what TokenLedger.revocationsState() returned`);
    this.revoked.clear();
    for (const jti of state.revoked) this.revoked.add(jti);
    this.expiredEarly.clear();
    for (const [jti, at] of state.expiredEarly) this.expiredEarly.set(jti, at);
    this.restoreCutoffs(this.revokedAll, state.revokedAll);
    this.restoreCutoffs(this.expiredAll, state.expiredAll);
  }

  private restoreCutoffs(into: Map<string, Cutoff>, cutoffs: readonly CutoffState[]): void {
    into.clear();
    for (const [merchantId, order, upTo, at] of cutoffs) {
      into.set(merchantId, { order, upTo, at });
      this.saw(order);
    }
  }

  /**
   * From now on, keeps the JSON of each record made (tokens issued and minted) for
   * `takeNewRecords` (or hands it to `sink`, the request that made it), and orders records and
   * cutoffs by the wall clock, as every sharing replica does. Without it nothing is kept. Call it
   * before restoring or absorbing anything.
   */
  shareRecords(sink?: (json: string, minted: boolean, jti: string) => boolean): void {
    this.newRecords.open(sink && ((json, { minted, jti }) => sink(json, minted, jti)));
  }

  /** Records taken whose commit failed: taken again, first, by the next commit. */
  requeueRecords(records: readonly string[]): void {
    this.newRecords.requeue(records);
  }

  /** The JSON of the records made since the last take (oldest first); empty unless `shareRecords`. */
  takeNewRecords(): string[] {
    return this.newRecords.take();
  }

  /**
   * Adds records other replicas made (`takeNewRecords`' JSON): a jti already recorded is kept as
   * it is, and the records stay bounded as `record` keeps them (`nowSeconds`: the sandbox clock's,
   * as `record` is given). Returns how many were not records (ignored: one bad record must not
   * stop the others).
   */
  absorbRecords(jsons: readonly string[], nowSeconds: number): number {
    let malformed = 0;
    for (const json of jsons) {
      const r = parseRecord(json);
      if (r === undefined) {
        malformed++;
        continue;
      }
      this.saw(r.order);
      if (this.issued.has(r.jti)) continue;
      if (this.issued.size >= this.maxRecords) this.prune(nowSeconds);
      this.issued.set(r.jti, { merchantId: r.merchant, issuedAt: r.iat, expiresAt: r.exp, order: r.order });
    }
    return malformed;
  }

  clear(): void {
    this.issued.clear();
    this.newRecords.clear();
    this.revoked.clear();
    this.revokedAll.clear();
    this.expiredEarly.clear();
    this.expiredAll.clear();
  }

  private covers(cutoff: Cutoff | undefined, jti: string, issuedAt: number): boolean {
    if (!cutoff) return false;
    const record = this.issued.get(jti);
    if (!record) this.missed++;
    return record ? record.order < cutoff.order : issuedAt <= cutoff.upTo;
  }

  /**
   * Strictly more than every order this ledger made or saw; once shared, at least the wall clock's
   * (so two replicas' orders compare as the times they were made, to the millisecond). The wall
   * clock, not the sandbox clock, which may stand still or go back.
   */
  private nextOrder(): number {
    if (!this.newRecords.isOpen) return ++this.lastOrder;
    const wall = Date.now() * ORDERS_PER_MS;
    // A wall clock faked centuries ahead would give orders too large to count by one.
    this.lastOrder = wall > this.lastOrder && wall <= Number.MAX_SAFE_INTEGER ? wall : this.lastOrder + 1;
    return this.lastOrder;
  }

  private saw(order: number): void {
    if (order > this.lastOrder) this.lastOrder = order;
  }

  /** Drops expired records; if every record is live, the oldest half goes (the map keeps insertion order). */
  private prune(nowSeconds: number): void {
    for (const [jti, t] of this.issued) {
      if (t.expiresAt <= nowSeconds) {
        this.issued.delete(jti);
        this.revoked.delete(jti);
        this.expiredEarly.delete(jti);
      }
    }
    if (this.issued.size < this.maxRecords) return;
    let toDrop = Math.ceil(this.issued.size / 2);
    for (const jti of this.issued.keys()) {
      if (toDrop-- <= 0) break;
      this.issued.delete(jti);
    }
  }
}

function cutoffStates(cutoffs: Map<string, Cutoff>): CutoffState[] {
  const out: CutoffState[] = [];
  for (const [merchantId, c] of cutoffs) out.push([merchantId, c.order, c.upTo, c.at]);
  return out;
}

/** One issued token as shared; `order` places it among revocations. */
interface RecordState {
  jti: string;
  merchant: string;
  iat: number;
  exp: number;
  order: number;
}

function recordJson(token: IssuedToken, order: number): string {
  const state: RecordState = { jti: token.jti, merchant: token.merchantId, iat: token.issuedAt, exp: token.expiresAt, order };
  return JSON.stringify(state);
}

function parseRecord(json: string): RecordState | undefined {
  let r: unknown;
  try {
    r = JSON.parse(json);
  } catch {
    return undefined;
  }
  if (typeof r !== "object" || r === null) return undefined;
  const { jti, merchant, iat, exp, order } = r as Record<string, unknown>;
  if (typeof jti !== "string" || jti === "" || typeof merchant !== "string") return undefined;
  if (!Number.isFinite(iat) || !Number.isFinite(exp) || !Number.isSafeInteger(order)) return undefined;
  return { jti, merchant, iat: iat as number, exp: exp as number, order: order as number };
}

/** What is wrong with a revocations state, or undefined. */
function revocationsProblem(state: RevocationsState): string | undefined {
  if (typeof state !== "object" || state === null) return "is not an object";
  if (!Array.isArray(state.revoked) || !state.revoked.every((jti) => typeof jti === "string")) return "needs revoked: a list of jtis";
  const early = state.expiredEarly;
  if (!Array.isArray(early) || !early.every((e) => Array.isArray(e) && typeof e[0] === "string" && Number.isFinite(e[1])))
    return "needs expiredEarly: a list of [jti, second]";
  for (const field of ["revokedAll", "expiredAll"] as const) {
    const list = state[field];
    if (!Array.isArray(list) || !list.every(isCutoffState)) return `needs ${field}: a list of [merchantId, order, upTo, at]`;
  }
  return undefined;
}

function isCutoffState(c: unknown): boolean {
  return (
    Array.isArray(c) && c.length === 4 && typeof c[0] === "string" && Number.isSafeInteger(c[1]) && Number.isFinite(c[2]) && Number.isFinite(c[3])
  );
}
