/**
 * What the sandbox remembers about the tokens it issued: which are revoked or expired early (by a
 * scenario rule or the library API), one by one or all of a merchant's at once. Bounded: records
 * of tokens past their expiry are dropped, since an expired token is refused as expired before
 * anything else is looked at.
 *
 * "All of a merchant's tokens" means the tokens issued before the call, counted by issue order, not
 * by second: with a frozen clock a token issued right after a revocation has the same `iat` as the
 * revoked ones, and must still work.
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
  serial: number;
}

/** Everything issued up to `serial` (or, for tokens without a record, up to second `upTo`). */
interface Cutoff {
  serial: number;
  upTo: number;
  /** For early expiry: the second the tokens expired. */
  at: number;
}

export class TokenLedger {
  private readonly issued = new Map<string, Recorded>();
  private serial = 0;
  private readonly revoked = new Set<string>();
  private readonly revokedAll = new Map<string, Cutoff>();
  private readonly expiredEarly = new Map<string, number>();
  private readonly expiredAll = new Map<string, Cutoff>();

  /**
   * @param maxRecords About 100 bytes each. Past it, expired records go, then the oldest half; a
   * token without a record is still judged by revocations, by its second of issue.
   */
  constructor(private readonly maxRecords = 20_000) {}

  record(token: IssuedToken, nowSeconds: number): void {
    if (this.issued.size >= this.maxRecords) this.prune(nowSeconds);
    this.issued.set(token.jti, { merchantId: token.merchantId, issuedAt: token.issuedAt, expiresAt: token.expiresAt, serial: ++this.serial });
  }

  get(jti: string): IssuedToken | undefined {
    const r = this.issued.get(jti);
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
    this.revokedAll.set(merchantId, { serial: this.serial, upTo: nowSeconds, at: nowSeconds });
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
    this.expiredAll.set(merchantId, { serial: this.serial, upTo: atSeconds, at: atSeconds });
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

  clear(): void {
    this.issued.clear();
    this.revoked.clear();
    this.revokedAll.clear();
    this.expiredEarly.clear();
    this.expiredAll.clear();
  }

  private covers(cutoff: Cutoff | undefined, jti: string, issuedAt: number): boolean {
    if (!cutoff) return false;
    const record = this.issued.get(jti);
    return record ? record.serial <= cutoff.serial : issuedAt <= cutoff.upTo;
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
