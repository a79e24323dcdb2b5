import { AccessTokens } from "../core/access-tokens.js";
import { adminTokenSetting, hostPolicy } from "../control/access.js";
import { clockView } from "../control/clock-ops.js";
import { EVENT_LIMIT_DEFAULTS, EventHub } from "../control/events.js";
import { ScenarioCatalogue } from "../control/scenario-list.js";
import { UiAssets } from "../control/ui-assets.js";
import { Journal } from "../control/journal.js";
import { mintToken, type MintedToken, type MintRequest } from "../control/mint.js";
import { analyze, type Finding } from "../control/report.js";
import { SessionStore } from "../control/sessions.js";
import { SandboxClock } from "../core/clock.js";
import { ConfigError, resolveSettings, SANDBOX_DEFAULTS, type SandboxSettings, type SettingsInput } from "../core/config.js";
import type { SandboxRequest, SandboxResponse } from "../core/http-types.js";
import { KeyRing } from "../core/keys.js";
import type { ScenarioKeys } from "../core/scenario-keys.js";
import { MerchantRegistry } from "../core/merchants.js";
import { createPipeline } from "./pipeline.js";
import type { SandboxOptions } from "./sandbox-options.js";
import { profileChooser, sandboxProfile } from "./profiles.js";
import { TokenLedger } from "../core/token-ledger.js";
import { tokenIdSource } from "../core/token-ids.js";
import { seededFaker } from "./seeded-faker.js";
import { INTERNALS, type SandboxInternals } from "./internals.js";
import { VERSION } from "../core/version.js";
import type { SandboxContext } from "./context.js";
import { heartbeatMs, positiveInt, sessionIdleMs, toInstant } from "./option-values.js";
import { problemResponse } from "../core/problem.js";
import { SharedEventHub } from "./shared/shared-events.js";
import { SharedState } from "./shared/shared-state.js";
import { adoptStoredKeys, type OpenedState, openState } from "./shared/open-state.js";
import { DEFAULT_SCENARIO } from "../scenarios/default-scenario.js";
import { merchantFile, type ScenarioInstance } from "../scenarios/instance.js";
import { ScenarioRegistry } from "../scenarios/registry.js";
import type { LoadedScenario } from "../scenarios/library.js";
import type { ScenarioFile } from "../scenarios/schema.js";

export type { SandboxOptions } from "./sandbox-options.js";
export type { RequestLogEntry } from "./pipeline.js";

export interface Sandbox {
  /** Handles one request: the whole auth model, framework-free. Never throws. */
  handle(request: SandboxRequest): Promise<SandboxResponse>;
  /** The sandbox clock; every scenario's clock follows it. */
  readonly clock: SandboxClock;
  /** Sandbox-wide settings, and the defaults every scenario starts from. */
  readonly settings: SandboxSettings;
  /** The primary scenario's signing keys (`signing`, `rotate(keepOld)`). */
  readonly keys: ScenarioKeys;
  readonly version: string;
  readonly scenarios: readonly ScenarioInstance[];
  scenario(name: string): ScenarioInstance | undefined;
  /** Sessions: `create(scenario?)`, `get`, `delete`, `reset`, `info` (as POST /__sandbox/sessions). */
  readonly sessions: SessionStore;
  /** The redacted request journal (as GET /__sandbox/requests). */
  readonly journal: Journal;
  /** What the integration did wrong (as GET /__sandbox/report). */
  report(filter?: { session?: string; merchant?: string }): Finding[];
  /** Mints a token from the catalogue (as POST /__sandbox/tokens). */
  mintToken(request?: MintRequest): Promise<MintedToken>;
  /** The whole sandbox back to how it started (as POST /__sandbox/reset). */
  reset(): void;
  /** Where the state lives: `memory`, or the shared store (a password in its URL shown as ***). */
  readonly state: string;
  /** Stops following the shared state and closes its store (nothing to do in memory). */
  close(): Promise<void>;
  /**
   * Resolves when every signing key is in: at once, unless createSandbox was given a
   * `pregeneratedKey` still being made. Rejects with the error when a key cannot be made (requests
   * that need it then fail too, none hangs). `keys.signing` may be read only after it.
   */
  readonly ready: Promise<void>;
}

/**
 * Builds one sandbox: settings, scenarios with their merchants and clocks, keys and token ledger,
 * all its own. Two sandboxes in one process share nothing. Throws ConfigError for an option that
 * cannot be used, ScenarioLoadError for a scenario that does not validate.
 */
export async function createSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const journalSize = positiveInt(options.journalSize ?? SANDBOX_DEFAULTS.journalSize, "journalSize");
  const opened = options.state === undefined ? undefined : await openState(options.state, journalSize, options.requireState ?? false);
  try {
    return await assemble(options, journalSize, opened);
  } catch (e) {
    // Whatever stops the start after the store is open leaves no connection behind.
    await opened?.store.close().catch(() => {});
    throw e;
  }
}

async function assemble(options: SandboxOptions, journalSize: number, opened: OpenedState | undefined): Promise<Sandbox> {
  const store = opened?.store;
  const profile = await sandboxProfile(options.profile);
  const settings = resolveSettings({ ...profile.profile.settings, ...givenSettings(options) });
  const control = {
    enabled: options.controlPlane ?? SANDBOX_DEFAULTS.controlPlane,
    adminToken: adminTokenSetting(options.adminToken),
    allowedHosts: hostPolicy(options.allowedHosts),
  };
  const seed = options.seed ?? SANDBOX_DEFAULTS.seed;
  if (!Number.isSafeInteger(seed)) throw new ConfigError(`seed must be a whole number, got ${String(options.seed)}`, "seed");
  const clock = new SandboxClock(options.frozenAt === undefined ? {} : { frozenAt: toInstant(options.frozenAt) });
  // Made last (it needs the whole context); the sinks and the event hub below reach it once it is.
  let shared: SharedState | undefined;
  // Shared state: the keys the other replicas made come first, so this one starts on theirs.
  const first = opened?.first;
  const ring = new KeyRing(
    options.signingKey === undefined ? undefined : { alg: settings.algorithm, text: options.signingKey },
    store ? undefined : options.pregeneratedKey,
    options.keySource,
  );
  const ledger = new TokenLedger();
  if (store) {
    // Tokens and keys a request makes go with that request's commit.
    ring.shareKeys((key) => shared?.runs.collectKey(key) ?? false);
    ledger.shareRecords((json, minted, jti) => shared?.runs.collectRecord(json, minted, jti) ?? false);
    if (first) await adoptStoredKeys(ring, first);
  }
  // With a key on its way, nothing waits for it here: the scenarios are made without it and what
  // signs or verifies waits for it (ring.ready). Otherwise a configured key that cannot be used
  // fails here, at start.
  const keysLater = store === undefined && options.pregeneratedKey !== undefined && options.signingKey === undefined;
  if (!keysLater) await ring.startKey(settings.algorithm);
  const merchants = new MerchantRegistry([]);
  // The admin token is a secret like a merchant's: redacted wherever a URL, a journal entry or an
  // echoed value carries it (a client that put it in a path or a query by mistake).
  if (control.adminToken !== undefined) merchants.secrets.add(control.adminToken);
  const scenarioSet = new ScenarioRegistry({ base: settings, parentClock: clock, ring, registry: merchants, profileFor: profileChooser(profile) });
  for (const loaded of await scenarioList(options)) {
    if (scenarioSet.byName(loaded.scenario.name)) {
      throw new ConfigError(`two scenarios are named '${loaded.scenario.name}' (${loaded.source}); give each its own name`);
    }
    await scenarioSet.add(loaded.scenario, loaded.source, { keysLater });
  }
  const tokens = new AccessTokens(settings, ring, merchants, ledger, (m) => scenarioSet.of(m), profile.profile.tokenFormat);
  // A Faker of this sandbox's own (seeded independently); its English definitions load when first needed.
  const { faker, english: fakerEnglish } = seededFaker(seed);
  const journal = new Journal(journalSize);
  const eventLimits = {
    maxSubscribers: positiveInt(options.maxEventSubscribers ?? EVENT_LIMIT_DEFAULTS.maxSubscribers, "maxEventSubscribers"),
    bufferSize: positiveInt(options.eventBufferSize ?? EVENT_LIMIT_DEFAULTS.bufferSize, "eventBufferSize"),
    heartbeatMs: heartbeatMs(options.eventHeartbeatMs ?? EVENT_LIMIT_DEFAULTS.heartbeatMs),
  };
  const sharedEvents = store ? new SharedEventHub(eventLimits, () => shared?.runs.collectEvents()) : undefined;
  const events = sharedEvents ?? new EventHub(eventLimits);
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const idleMs = sessionIdleMs(options.sessionIdleTtl ?? SANDBOX_DEFAULTS.sessionIdleTtl);
  const sessions = new SessionStore(
    scenarioSet,
    ledger,
    {
      maxSessions: positiveInt(options.maxSessions ?? SANDBOX_DEFAULTS.maxSessions, "maxSessions"),
      idleMs,
    },
    (change) => {
      if (!events.active) return;
      events.publish("session", journal.lastId(), change, change.id);
      if (change.change === "ended") events.closeSession(change.id);
    },
    (entry) => {
      if (events.active) events.publish("history", entry.id, entry, entry.session);
    },
    store !== undefined,
  );
  const initialFrozenAt = options.frozenAt === undefined ? undefined : toInstant(options.frozenAt);

  function resetAll(): void {
    sessions.deleteAll();
    if (initialFrozenAt === undefined) clock.reset();
    else clock.freeze(initialFrozenAt);
    ledger.clear();
    for (const scenario of scenarioSet.all) {
      scenario.reset();
      // Tokens issued before the reset do not come back to life now that the ledger is empty.
      for (const m of scenario.merchants) ledger.revokeAllOf(m.id, scenario.clock.nowSeconds());
    }
    journal.clear();
    // Shared: the store's journal and feed start again too, for every replica.
    shared?.clearAfterCommit();
    // The sandbox clock went back to its start: the streams hear of it like of any other move.
    if (events.active) events.publish("clock", journal.lastId(), clockView(clock), undefined);
  }

  const ctx: SandboxContext = {
    version: VERSION,
    settings,
    clock,
    merchants,
    ring,
    ledger,
    tokens,
    faker,
    fakerEnglish,
    newTokenId: tokenIdSource(faker, options.seededTokenIds ?? false),
    scenarios: scenarioSet,
    // Shared: a rule's delay is waited for after the request's commit (Runs.deferredSleep).
    sleep: (ms) => (shared ? shared.runs.deferredSleep(ms) : sleep(ms)),
    journal,
    sessions,
    events,
    control,
    ui: new UiAssets(),
    scenarioCatalogue: new ScenarioCatalogue(),
    resetAll,
  };

  const pipeline = createPipeline(ctx, { onRequest: options.onRequest, onInternalError: options.onInternalError });
  let handle = pipeline;
  if (store && sharedEvents) {
    shared = new SharedState({ store, ctx, sessions, hub: sharedEvents, journal, idleMs, timings: options.stateTimings });
    shared.runs.sleep = sleep;
    if (first) await shared.begin(first);
    else shared.beginWhenReachable(opened!.waiting!, options.onNotice ?? (() => {}));
    handle = shared.wrap(pipeline, (error, request) => problemResponse(error, request.path, merchants.secrets.view()));
  }

  const sandbox: Sandbox & { readonly [INTERNALS]: SandboxInternals } = {
    handle,
    clock,
    settings,
    keys: scenarioSet.primary.keys,
    [INTERNALS]: { merchants, ring, ledger, tokens },
    version: VERSION,
    get scenarios() {
      return scenarioSet.all;
    },
    scenario: (name) => scenarioSet.byName(name),
    sessions,
    journal,
    report: (filter = {}) => analyze(journal.list(filter)),
    mintToken: (request = {}) => mintToken(ctx, request),
    reset: resetAll,
    state: store?.shownAs ?? "memory",
    close: async () => {
      await shared?.close();
    },
    ready: ring.ready ?? Promise.resolve(),
  };
  return sandbox;
}

/** The scenarios to load, in order: the given ones, then the built-in default unless replaced. */
async function scenarioList(options: SandboxOptions): Promise<LoadedScenario[]> {
  // The loader (YAML parser, zod) is imported only when there is something to load: a sandbox
  // with just the built-in scenario starts without it.
  const needsLoader = (options.scenarios ?? []).some((e) => typeof e === "string" || !("scenario" in e && "source" in e));
  const loader = needsLoader ? { ...(await import("../scenarios/library.js")), ...(await import("../scenarios/load.js")) } : undefined;
  const given = (options.scenarios ?? []).map((entry, i): LoadedScenario => {
    if (typeof entry === "string") return loader!.resolveScenario(entry);
    if ("scenario" in entry && "source" in entry) return entry as LoadedScenario;
    const source = `createSandbox scenarios[${i}]`;
    return { scenario: loader!.validateScenario(entry, source), source };
  });
  if (given.some((g) => g.scenario.name === "default")) return given;
  const builtIn: ScenarioFile = options.merchants ? { ...DEFAULT_SCENARIO, merchants: options.merchants.map(merchantFile) } : DEFAULT_SCENARIO;
  return [...given, { scenario: builtIn, source: "built-in" }];
}

/** The settings options given (an option set to undefined is not given: the profile's value stays). */
function givenSettings(options: SandboxOptions): SettingsInput {
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) as SettingsInput;
}
