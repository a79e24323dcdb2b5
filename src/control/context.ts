import type { SandboxClock } from "../core/clock.js";
import type { Endpoint, EndpointContext, RequestTrace } from "../core/context.js";
import type { SandboxRequest } from "../core/http-types.js";
import type { TokenLedger } from "../core/token-ledger.js";
import type { ScenarioSet } from "../scenarios/registry.js";
import type { HostPolicy } from "./access.js";
import type { EventHub } from "./events.js";
import type { Journal } from "./journal.js";
import type { SessionStore } from "./sessions.js";
import type { ScenarioCatalogue } from "./scenario-list.js";
import type { UiAssets } from "./ui-assets.js";

/**
 * What the control plane (/__sandbox/) may use: the whole sandbox, its sessions, journal and reset
 * included. Merchant API endpoints get only the EndpointContext this extends.
 */
export interface ControlContext extends EndpointContext {
  /** The sandbox clock; every scenario's clock follows it. */
  readonly clock: SandboxClock;
  readonly ledger: TokenLedger;
  readonly scenarios: ScenarioSet;
  readonly journal: Journal;
  readonly sessions: SessionStore;
  /** The open event streams (GET /__sandbox/events). */
  readonly events: EventHub;
  readonly control: ControlSettings;
  /** The QA page's files (GET /__sandbox/ui/), read when first asked for. */
  readonly ui: UiAssets;
  /** The scenarios sessions can be made from (GET /__sandbox/scenarios), the library read when first asked for. */
  readonly scenarioCatalogue: ScenarioCatalogue;
  /** The whole sandbox back to how it started (POST /__sandbox/reset). */
  resetAll(): void;
}

/** Who may reach the control plane, and whether it answers at all. */
export interface ControlSettings {
  readonly enabled: boolean;
  readonly adminToken: string | undefined;
  readonly allowedHosts: HostPolicy;
}

/** A control-plane endpoint. */
export type ControlEndpoint = Endpoint<ControlContext>;

/** A control-plane route's handler: an endpoint, given the path's `{name}` segments decoded, in order. */
export type ControlHandler = (request: SandboxRequest, ctx: ControlContext, trace: RequestTrace, params: string[]) => ReturnType<ControlEndpoint>;
