import { randomBytes } from "node:crypto";
import { echo } from "../core/echo.js";
import { TooManySessions } from "../core/errors.js";
import type { TokenLedger } from "../core/token-ledger.js";
import type { ScenarioInstance } from "../scenarios/instance.js";
import { ScenarioLoadError } from "../scenarios/problems.js";
import type { ScenarioRegistry } from "../scenarios/registry.js";
import type { MerchantFile, ScenarioFile } from "../scenarios/schema.js";
import { addToHistory, emptyHistory, type SessionHistory } from "./session-history.js";
import type { HistoryEntry, SessionChange, SessionInfo } from "./session-info.js";
import { sessionBaseUrl } from "./session-url.js";

/**
 * Sessions: a private copy of a scenario per test, with fresh credentials, its own state and its
 * own clock, so parallel CI jobs against one sandbox never collide. Sessions idle longer than the
 * idle limit are reaped, and there are at most `maxSessions`, so memory stays bounded.
 */
export interface Session {
  id: string;
  instance: ScenarioInstance;
  createdAt: number;
  lastUsedAt: number;
  /** What was done to it through the control plane: data, bounded (session-history.ts). */
  history: SessionHistory;
}

/** What a session is made again from on another replica (shared state): the stored part holds these. */
export interface SessionRecord {
  id: string;
  file: ScenarioFile;
  source: string;
  profile: string;
  createdAt: number;
  history: SessionHistory;
}

export interface SessionLimits {
  maxSessions: number;
  idleMs: number;
}

export class SessionStore {
  private readonly sessions = new Map<string, Session>();
  /**
   * No session was used before this (wall-clock ms): a reap before `oldestUse + idleMs` has
   * nothing to end, and costs one comparison instead of a walk over every session (which made
   * each creation O(n)). Uses move a session's time later, so it stays a lower bound; each walk makes it exact.
   */
  private oldestUse = Number.POSITIVE_INFINITY;
  /**
   * Creations under way: each holds a slot from its check on, taken in the same tick as the check
   * (a creation awaits its scenario and key before the session exists, and concurrent creations
   * that all passed a check of `sessions.size` alone overfilled the limit).
   */
  private reserved = 0;
  /** History entries made in this sandbox: the `m` of their ids `req_<n>.<m>`, so ids never repeat. */
  private historyCount = 0;

  constructor(
    private readonly scenarios: ScenarioRegistry,
    private readonly ledger: TokenLedger,
    readonly limits: SessionLimits,
    /** Told of every session made, reset or ended (the event stream's `session` events). */
    private readonly onChange: (change: SessionChange) => void = () => {},
    /** Told of every history entry (the event stream's `history` events). */
    private readonly onHistory: (entry: HistoryEntry) => void = () => {},
    /**
     * Replicas share the sessions (`--state`): idle sessions are reaped by the store, which alone
     * knows their last use on every replica, and history ids must not repeat across replicas.
     */
    private readonly shared = false,
  ) {}

  /** A session of a loaded scenario, or of a library scenario by name; `default` when none is named. */
  async create(scenarioName = "default", profile?: string): Promise<Session> {
    this.reap();
    if (this.sessions.size + this.reserved >= this.limits.maxSessions) {
      throw new TooManySessions(
        `This sandbox already holds ${this.limits.maxSessions} sessions. DELETE /__sandbox/sessions/{id} when a test is done, or wait for idle sessions to be reaped.`,
      );
    }
    this.reserved++;
    try {
      return await this.make(scenarioName, profile);
    } finally {
      // Made (now counted in `sessions`) or failed: either way the slot is no longer held here.
      this.reserved--;
    }
  }

  private async make(scenarioName: string, profile: string | undefined): Promise<Session> {
    // A loaded scenario or a library name, never a path: the control plane must not read the
    // server's files on a caller's say-so.
    const template =
      this.scenarios.byName(scenarioName)?.file ??
      (isScenarioName(scenarioName)
        ? (await import("../scenarios/library.js")).resolveScenario(
            scenarioName,
            undefined,
            this.scenarios.loaded.map((s) => s.name),
            echo,
          ).scenario
        : unknownScenario(scenarioName));
    const id = `ses_${randomBytes(8).toString("hex")}`;
    const file: ScenarioFile = { ...template, merchants: template.merchants.map((m, i) => freshCredentials(m, id, i)) };
    const instance = await this.scenarios.add(file, `session ${id} of '${template.name}'`, { sessionId: id, profile });
    const now = Date.now();
    const session = { id, instance, createdAt: now, lastUsedAt: now, history: emptyHistory() };
    this.sessions.set(id, session);
    this.oldestUse = Math.min(this.oldestUse, now);
    this.onChange({ change: "created", id, scenario: template.name });
    return session;
  }

  get(id: string): Session | undefined {
    this.reap();
    return this.sessions.get(id);
  }

  list(): Session[] {
    this.reap();
    return [...this.sessions.values()];
  }

  /**
   * The session of a base URL (`/s/<id>/...`), if it is live: one lookup, ending that session first
   * if it has been idle too long (a request must not bring it back), without reaping the others.
   */
  active(id: string): Session | undefined {
    if (this.shared) return this.sessions.get(id);
    return this.endIfIdle(id) ? undefined : this.sessions.get(id);
  }

  /**
   * Ends the session if it has been idle too long. Called when a request arrives with one of its
   * merchants' credentials, so an expired session cannot come back to life before the next reap.
   */
  endIfIdle(id: string): boolean {
    if (this.shared) return false;
    const s = this.sessions.get(id);
    if (!s || s.lastUsedAt >= Date.now() - this.limits.idleMs) return false;
    this.end(s, "reaped");
    return true;
  }

  /** Marks a session as used (a request of one of its merchants), postponing its reaping. `atMs`: when (shared: another replica's use). */
  touch(id: string, atMs?: number): void {
    const s = this.sessions.get(id);
    // Another replica's use reported late never moves the last use back.
    if (!s || (atMs !== undefined && atMs < s.lastUsedAt)) return;
    s.lastUsedAt = atMs ?? Date.now();
    // Only lowers it if the wall clock went back (a test's fake timers).
    if (s.lastUsedAt < this.oldestUse) this.oldestUse = s.lastUsedAt;
  }

  delete(id: string): boolean {
    const s = this.sessions.get(id);
    if (!s) return false;
    this.end(s, "deleted");
    return true;
  }

  /** Back to a fresh start: scenario state, clock, and every token issued so far revoked. */
  reset(session: Session): void {
    session.instance.reset();
    for (const m of session.instance.merchants) this.ledger.revokeAllOf(m.id, session.instance.clock.nowSeconds());
    this.onChange({ change: "reset", id: session.id, scenario: session.instance.file.name });
  }

  /** Tells the event stream that actions ran on the session (break it now): names only. */
  actionsRan(session: Session, applied: string[], rule: string | undefined): void {
    this.onChange({ change: "actions", id: session.id, scenario: session.instance.file.name, applied, ...(rule && { rule }) });
  }

  /**
   * Adds what was just done to the session to its history and tells the streams. `afterId`: the
   * journal's last request id (`req_<n>`), so the entry sits after that request in the replay;
   * `sandboxTimeMs`: the session clock before the change.
   */
  remember(
    session: Session,
    afterId: string,
    sandboxTimeMs: number,
    what: Omit<HistoryEntry, "id" | "session" | "time" | "sandboxTime" | "clock">,
  ): HistoryEntry {
    const clock = session.instance.clock;
    const entry: HistoryEntry = {
      id: `${afterId}.${this.nextHistoryNumber()}`,
      session: session.id,
      time: new Date().toISOString(),
      sandboxTime: new Date(sandboxTimeMs).toISOString(),
      ...what,
      clock: { now: new Date(clock.now()).toISOString(), frozen: clock.frozen },
    };
    addToHistory(session.history, entry);
    this.onHistory(entry);
    return entry;
  }

  /**
   * The `m` of the next history id `req_<n>.<m>`. Shared: from the wall clock, so replicas' ids
   * neither repeat nor go back (a replica's counter alone would give two replicas the same id).
   */
  private nextHistoryNumber(): number {
    const count = ++this.historyCount;
    return this.shared ? (Date.now() - HISTORY_EPOCH_MS) * 1000 + (count % 1000) : count;
  }

  /**
   * A session another replica made (shared state): its scenario instance made here from the same
   * file, its history as stored. No event: the replica that made it told the streams.
   */
  async adopt(stored: SessionRecord, startKid?: string): Promise<Session> {
    const known = this.sessions.get(stored.id);
    if (known) return known;
    const instance = await this.scenarios.add(stored.file, stored.source, {
      sessionId: stored.id,
      profile: stored.profile,
      ...(startKid !== undefined && { startKid }),
    });
    const session = { id: stored.id, instance, createdAt: stored.createdAt, lastUsedAt: Date.now(), history: stored.history };
    this.sessions.set(stored.id, session);
    return session;
  }

  /** Ends a session another replica ended (shared state), without telling the streams again. */
  endQuietly(id: string): void {
    const s = this.sessions.get(id);
    if (!s) return;
    this.sessions.delete(s.id);
    this.scenarios.remove(s.instance);
    for (const m of s.instance.merchants) this.ledger.forgetMerchant(m.id);
  }

  /** Ends a session the store reaped (shared state): told to the streams as a reaping. */
  endReaped(id: string): void {
    const s = this.sessions.get(id);
    if (s) this.end(s, "reaped");
  }

  deleteAll(): void {
    for (const s of [...this.sessions.values()]) this.end(s, "deleted");
  }

  /** `host`: the Host header of the request that asks, for `base_url` (only the path without one). */
  info(session: Session, host?: string): SessionInfo {
    const merchants = session.instance.merchants.map((m) => ({
      id: m.id,
      api_key: m.apiKey,
      api_secret: m.apiSecret,
      payment_token: m.paymentToken,
      login: { email: m.login!.email, password: m.login!.password },
    }));
    return {
      id: session.id,
      scenario: session.instance.file.name,
      profile: session.instance.profile,
      merchant: merchants[0]!,
      merchants,
      base_url: sessionBaseUrl(session.id, host),
      expires_at: new Date(session.lastUsedAt + this.limits.idleMs).toISOString(),
    };
  }

  get size(): number {
    return this.sessions.size;
  }

  private end(s: Session, reason: "deleted" | "reaped"): void {
    this.onChange({ change: "ended", id: s.id, scenario: s.instance.file.name, reason });
    this.sessions.delete(s.id);
    this.scenarios.remove(s.instance);
    for (const m of s.instance.merchants) this.ledger.forgetMerchant(m.id);
  }

  /** Ends the sessions idle longer than the limit (wall-clock time: the sandbox clock may be frozen). */
  private reap(): void {
    if (this.shared) return;
    const cutoff = Date.now() - this.limits.idleMs;
    if (this.oldestUse >= cutoff) return;
    let oldest = Number.POSITIVE_INFINITY;
    for (const s of [...this.sessions.values()]) {
      if (s.lastUsedAt < cutoff) this.end(s, "reaped");
      else oldest = Math.min(oldest, s.lastUsedAt);
    }
    this.oldestUse = oldest;
  }
}

/** History numbers of shared sessions count milliseconds from here, to stay within 15 digits. */
const HISTORY_EPOCH_MS = 1_700_000_000_000;

function isScenarioName(name: string): boolean {
  return /^[a-z0-9][a-z0-9-]*$/.test(name);
}

function unknownScenario(name: string): never {
  throw new ScenarioLoadError([
    {
      file: name.slice(0, 64),
      line: 1,
      column: 1,
      path: "",
      message: `'${echo(name, 64)}' is not a scenario name; use a loaded scenario or a library name such as 'token-endpoint-outage' (files are loaded with serve --scenario)`,
    },
  ]);
}

/** A fresh random api_secret, as a session's merchants get them (and `rotate_secret: true`). */
export function newApiSecret(): string {
  return `ss_${randomBytes(12).toString("hex")}`;
}

/** The scenario's merchant with credentials of its own: unique per session, random, never guessable. */
function freshCredentials(m: MerchantFile, session: string, index: number): MerchantFile {
  const r = () => randomBytes(12).toString("hex");
  const tag = `${session.slice(4)}_${index}`;
  return {
    ...m,
    id: `${m.id}.${session}`,
    api_key: `sk_${tag}`,
    api_secret: newApiSecret(),
    payment_token: `mpt_test_${r()}`,
    login: { email: `${tag}@sessions.sandbox.test`, password: `pw_${r()}` },
  };
}
