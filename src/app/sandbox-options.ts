import type { Algorithm, SettingsInput } from "../core/config.js";
import type { KeySource, SigningKey } from "../core/keys.js";
import type { MerchantInput } from "../core/merchants.js";
import type { StateStore } from "../core/state-store.js";
import type { StateTimings } from "./shared/state-timings.js";
import type { LoadedScenario } from "../scenarios/library.js";
import type { ScenarioFile } from "../scenarios/schema.js";
import type { RequestLogEntry } from "./pipeline.js";
import type { ProfileOption } from "./profiles.js";

/** What createSandbox takes: every option, with its default. */
export interface SandboxOptions extends SettingsInput {
  /**
   * Scenarios to load: library names (`token-endpoint-outage`), file paths, or scenario objects
   * in the file format. The built-in `default` scenario is loaded too, unless one of these is
   * named `default`. The first one is the primary scenario (see ScenarioSet.primary).
   */
  scenarios?: Array<string | ScenarioFile | LoadedScenario>;
  /**
   * The response profile: the wire shape of the merchant API's answers. A built-in name (`oauth`,
   * the default, `lexik`, `camel`, `envelope`), a profile file's path, or a profile object. Its jwt
   * section sets alg, token ttl, issuer and audience unless these options are given.
   */
  profile?: ProfileOption;
  /** Replaces the built-in default scenario's merchant(s) (library shorthand for a one-scenario sandbox). */
  merchants?: MerchantInput[];
  /** Seed for every generated value (payment ids, checkout URLs, jti): same seed, same sequence. Default 1 (SANDBOX_DEFAULTS). */
  seed?: number;
  /**
   * Token ids (jti) from the seed alone, the same run to run, as whole tokens are with a fixed key
   * and clock (snapshot tests). Default false: each sandbox mixes a random value of its own into
   * them, so a token from before a restart, or from a replica with the same seed, never shares a
   * jti with another (a revocation by jti would reach both).
   */
  seededTokenIds?: boolean;
  /**
   * The signing key: a PKCS#8 PEM or a private JWK (JSON) for RS256/ES256, a secret of at least
   * 32 bytes for HS256. Give the same key to several replicas so they accept each other's tokens.
   */
  signingKey?: string;
  /** Start with the sandbox clock frozen at this instant. */
  frozenAt?: Date | number | string;
  /** Called once per request, after the response is made, with nothing secret in it. */
  onRequest?: (entry: RequestLogEntry) => void;
  /** Called when a request hit a bug of ours (the client gets a 500 problem). */
  onInternalError?: (error: unknown, entry: RequestLogEntry) => void;
  /**
   * A start key already being generated (the CLI begins RSA generation while it loads).
   * createSandbox does not wait for it: the sandbox answers at once what needs no key (health,
   * 404s, payment/init, most of the control plane), and what signs or verifies waits for the key
   * (see Sandbox.ready). Ignored when `signingKey` is given.
   */
  pregeneratedKey?: { alg: Algorithm; key: Promise<SigningKey> };
  /**
   * For tests only, not a setting: where the sandbox's new keys come from instead of being
   * generated (start keys, a rotating scenario's keys, minting's foreign key). The test helpers
   * give keys made once per test run (`test/support/keys.ts`), as generating a 2048-bit RSA key is
   * most of a test sandbox's start. Neither the CLI nor the HTTP API can set it.
   * @internal
   */
  keySource?: KeySource;
  /** How scenario delays wait; tests may pass a recorder instead of a real timer. */
  sleep?: (ms: number) => Promise<void>;
  /** The /__sandbox/ control plane (default on); off leaves only GET /__sandbox/health. */
  controlPlane?: boolean;
  /**
   * When set, the control plane (but health) demands it as a bearer token or X-Admin-Token. At
   * least 16 characters; an empty one is an error, not "no token".
   */
  adminToken?: string;
  /**
   * Host names the control plane answers to, beyond localhost, IP addresses and single-label names
   * (docker and CI service names): `sandbox.ci.example`, `.example.test` for a name and every name
   * under it, `*` for any (unsafe: web pages get in through DNS rebinding).
   */
  allowedHosts?: string[];
  /** How many requests the journal keeps (default 1000, SANDBOX_DEFAULTS). */
  journalSize?: number;
  /** At most this many sessions at once (default 1000, SANDBOX_DEFAULTS). */
  maxSessions?: number;
  /** Sessions unused this long are reaped (default 30m, SANDBOX_DEFAULTS). */
  sessionIdleTtl?: string | number;
  /** At most this many open event streams (GET /__sandbox/events) at once (default 32, EVENT_LIMIT_DEFAULTS). */
  maxEventSubscribers?: number;
  /** Events a stream may have waiting for a slow client before it is closed with `overflow` (default 256, EVENT_LIMIT_DEFAULTS). */
  eventBufferSize?: number;
  /** How often open event streams get a keep-alive comment, in ms (default 15000, EVENT_LIMIT_DEFAULTS; 0: never). */
  eventHeartbeatMs?: number;
  /**
   * Where the state lives when replicas share it: `redis://[:password@]host:port[/db]` (or
   * `rediss://`), or a StateStore. Default: this sandbox's own objects, in memory. With a store,
   * call `close()` when done: the sandbox holds its connections.
   */
  state?: string | StateStore;
  /**
   * With `state`: stop the start (ConfigError) when the shared state cannot be read at start.
   * Default false: the sandbox starts unhealthy, answers 503 state_unavailable (health too), and
   * begins serving by itself once the store answers (under compose or Kubernetes, Redis may come
   * up after the replicas).
   */
  requireState?: boolean;
  /**
   * For tests only, not a setting: the shared state's waits (its tick, the time replicas get to
   * offer their state to an emptied store), shorter than a deployment's.
   * @internal
   */
  stateTimings?: StateTimings;
  /** Lines for the operator, none secret: the shared state is not reachable yet, or is now. */
  onNotice?: (message: string) => void;
}
