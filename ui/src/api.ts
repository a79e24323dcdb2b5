/**
 * The page's only way to the sandbox: the public control plane (/__sandbox/…), the same operations
 * a CI script uses, documented in /__sandbox/openapi.json. The admin token, when the sandbox has
 * one, is kept for this tab only (sessionStorage) and sent as X-Admin-Token.
 */
import type { ClockView, JournalEntry, MintAnswer, ScenarioSummary, SessionAnswer, SessionDetail, SessionListItem, Finding } from "./types.js";

const TOKEN_KEY = "merchant-sandbox.admin-token";

/** A refusal from the control plane, as its problem+json body says it. */
export class ControlError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "ControlError";
  }

  /** The sandbox wants the admin token (none sent, or a wrong one). */
  get needsAdminToken(): boolean {
    return this.status === 401 && this.code === "admin_token_required";
  }
}

export class ControlApi {
  constructor(private readonly storage: Pick<Storage, "getItem" | "setItem" | "removeItem"> = sessionStorage) {}

  get adminToken(): string | null {
    return this.storage.getItem(TOKEN_KEY);
  }

  setAdminToken(token: string | null): void {
    if (token) this.storage.setItem(TOKEN_KEY, token);
    else this.storage.removeItem(TOKEN_KEY);
  }

  headers(extra: Record<string, string> = {}): Record<string, string> {
    const token = this.adminToken;
    return { ...extra, ...(token ? { "x-admin-token": token } : {}) };
  }

  async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const init: RequestInit = { method, headers: this.headers(body === undefined ? {} : { "content-type": "application/json" }) };
    if (body !== undefined) init.body = JSON.stringify(body);
    const res = await fetch(path, init);
    if (res.status === 204) return undefined as T;
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (!res.ok) {
      const p = (parsed ?? {}) as { code?: string; detail?: string; error_description?: string };
      throw new ControlError(
        res.status,
        p.code ?? `http_${res.status}`,
        p.detail ?? p.error_description ?? `${method} ${path} answered ${res.status}`,
      );
    }
    return parsed as T;
  }

  /** Always open, even with an admin token set: the page's fallback list of scenario names. */
  scenarios(): Promise<{ scenarios: ScenarioSummary[] }> {
    return this.call("GET", "/__sandbox/scenarios");
  }
  sessions(): Promise<{ sessions: SessionListItem[] }> {
    return this.call("GET", "/__sandbox/sessions");
  }
  createSession(scenario: string): Promise<SessionAnswer> {
    return this.call("POST", "/__sandbox/sessions", { scenario });
  }
  session(id: string): Promise<SessionDetail> {
    return this.call("GET", `/__sandbox/sessions/${encodeURIComponent(id)}`);
  }
  endSession(id: string): Promise<void> {
    return this.call("DELETE", `/__sandbox/sessions/${encodeURIComponent(id)}`);
  }
  resetSession(id: string): Promise<{ reset: true; clock: ClockView }> {
    return this.call("POST", `/__sandbox/sessions/${encodeURIComponent(id)}/reset`, {});
  }
  clock(id: string): Promise<ClockView> {
    return this.call("GET", `/__sandbox/sessions/${encodeURIComponent(id)}/clock`);
  }
  changeClock(id: string, change: { advance?: string; set?: string; freeze?: boolean }): Promise<ClockView> {
    return this.call("POST", `/__sandbox/sessions/${encodeURIComponent(id)}/clock`, change);
  }
  runActions(id: string, body: { merchant?: string; now?: Record<string, unknown>; next?: Record<string, unknown> }): Promise<unknown> {
    return this.call("POST", `/__sandbox/sessions/${encodeURIComponent(id)}/actions`, body);
  }
  journal(session: string): Promise<{ requests: JournalEntry[] }> {
    return this.call("GET", `/__sandbox/requests?session=${encodeURIComponent(session)}`);
  }
  report(session: string): Promise<{ session: string; findings: Finding[] }> {
    return this.call("GET", `/__sandbox/sessions/${encodeURIComponent(session)}/report`);
  }
  mint(body: { merchant?: string; variant: string; ttl?: string }): Promise<MintAnswer> {
    return this.call("POST", "/__sandbox/tokens", body);
  }
}
