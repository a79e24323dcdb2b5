/**
 * What the sandbox remembers about the tokens it issued: which are revoked, one by one or all of a
 * merchant's at once. Bounded: records of tokens past their expiry are dropped, since an expired
 * token is refused as expired before revocation is ever looked at.
 */
export interface IssuedToken {
  jti: string;
  merchantId: string;
  issuedAt: number;
  expiresAt: number;
}

export class TokenLedger {
  private readonly issued = new Map<string, IssuedToken>();
  private readonly revoked = new Set<string>();
  /** Per merchant: every token issued at or before this second is revoked. */
  private readonly revokedUpTo = new Map<string, number>();

  constructor(private readonly maxRecords = 100_000) {}

  record(token: IssuedToken, nowSeconds: number): void {
    if (this.issued.size >= this.maxRecords) this.prune(nowSeconds);
    this.issued.set(token.jti, token);
  }

  get(jti: string): IssuedToken | undefined {
    return this.issued.get(jti);
  }

  revoke(jti: string): void {
    this.revoked.add(jti);
  }

  revokeAllOf(merchantId: string, upToSeconds: number): void {
    this.revokedUpTo.set(merchantId, upToSeconds);
  }

  isRevoked(jti: string, merchantId: string, issuedAt: number): boolean {
    if (this.revoked.has(jti)) return true;
    const upTo = this.revokedUpTo.get(merchantId);
    return upTo !== undefined && issuedAt <= upTo;
  }

  get size(): number {
    return this.issued.size;
  }

  clear(): void {
    this.issued.clear();
    this.revoked.clear();
    this.revokedUpTo.clear();
  }

  /** Drops expired records; if every record is live, the oldest half goes (the map keeps insertion order). */
  private prune(nowSeconds: number): void {
    for (const [jti, t] of this.issued) {
      if (t.expiresAt <= nowSeconds) {
        this.issued.delete(jti);
        this.revoked.delete(jti);
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
