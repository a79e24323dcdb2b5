import type { AnswerShaper, ProfileChooser } from "../core/answer-shaper.js";
import { SandboxClock } from "../core/clock.js";
import { ConfigError, resolveSettings, type SandboxSettings, type SettingsInput } from "../core/config.js";
import { parseSignedDuration } from "../core/duration.js";
import type { KeyRing } from "../core/keys.js";
import { ScenarioKeys } from "../core/scenario-keys.js";
import type { Merchant, MerchantInput, MerchantRegistry } from "../core/merchants.js";
import { DEFAULT_TOKEN_FORMAT, type TokenFormat } from "../core/token-format.js";
import { CompiledRule } from "./rules.js";
import type { MerchantFile, RuleFile, ScenarioFile, SettingsFile } from "./schema.js";

/**
 * A scenario at run time: its merchants (registered in the sandbox's registry), its settings
 * (the server's, overridden by the file's), its own clock (following the sandbox clock, plus the
 * file's clock_offset and any clock the rules move), its signing keys, its state and its rules
 * with their call counts. Everything a rule changes lives here or on the scenario's merchants,
 * so scenarios never affect each other.
 */
export class ScenarioInstance {
  readonly name: string;
  readonly description: string;
  readonly settings: SandboxSettings;
  readonly clock: SandboxClock;
  readonly keys: ScenarioKeys;
  readonly merchants: Merchant[];
  readonly rules: CompiledRule[];
  state = "started";
  startedAtMs: number;
  /** How many rules at the head of `rules` a session's actions added (`next`), and how many were ever added. */
  private pendingActionRules = 0;
  private actionRulesAdded = 0;
  /** Set for a session's private copy of a scenario (POST /__sandbox/sessions). */
  readonly sessionId: string | undefined;
  /** The response profile's name, and its renderer (none for oauth: today's answers). */
  readonly profile: string;
  readonly shaper: AnswerShaper | undefined;
  /** How its tokens are written: its profile's jwt section. */
  readonly tokenFormat: TokenFormat;
  private readonly initialLoginMode: SandboxSettings["loginMode"];
  private readonly clockOffsetMs: number;
  /** The sandbox's merchants: a reset gives secrets back through it, so redaction follows. */
  private readonly registry: MerchantRegistry;

  private constructor(init: {
    file: ScenarioFile;
    source: string;
    settings: SandboxSettings;
    clock: SandboxClock;
    clockOffsetMs: number;
    keys: ScenarioKeys;
    merchants: Merchant[];
    sessionId: string | undefined;
    profile: string;
    shaper: AnswerShaper | undefined;
    tokenFormat: TokenFormat;
    registry: MerchantRegistry;
  }) {
    this.name = init.file.name;
    this.description = init.file.description;
    this.source = init.source;
    this.settings = init.settings;
    this.clock = init.clock;
    this.keys = init.keys;
    this.merchants = init.merchants;
    this.rules = (init.file.rules ?? []).map((rule, i) => new CompiledRule(rule, i));
    this.startedAtMs = init.clock.now();
    this.file = init.file;
    this.sessionId = init.sessionId;
    this.profile = init.profile;
    this.shaper = init.shaper;
    this.tokenFormat = init.tokenFormat;
    this.initialLoginMode = init.settings.loginMode;
    this.clockOffsetMs = init.clockOffsetMs;
    this.registry = init.registry;
  }

  /** Where the scenario came from (a file path, or "built-in"). */
  readonly source: string;
  readonly file: ScenarioFile;

  static async create(
    file: ScenarioFile,
    source: string,
    deps: {
      base: SandboxSettings;
      parentClock: SandboxClock;
      ring: KeyRing;
      registry: MerchantRegistry;
      owners: Map<string, ScenarioInstance>;
      sessionId?: string;
      /** Picks the response profile (the app's, which knows the profiles); none: oauth. */
      profileFor?: ProfileChooser;
      /** The profile a session asked for. */
      profile?: string;
      /**
       * Do not wait for the start key: the scenario answers what needs no key at once, and what
       * signs or verifies waits for the key ring's `ready` (a sandbox starting with a key on its way).
       */
      keysLater?: boolean;
      /**
       * The start key, one the ring holds: a scenario made for a state stored by another replica
       * (a session adopted) starts on that state's key rather than generating one it would drop.
       */
      startKid?: string;
    },
  ): Promise<ScenarioInstance> {
    const where = `scenario '${file.name}' (${source})`;
    const profile = await deps.profileFor?.(file, source, deps.profile);
    let settings: SandboxSettings;
    try {
      // The profile's jwt ttl, alg, leeway, issuer and audience, under the file's own settings.
      settings = resolveSettings({ ...profile?.settings, ...settingsInput(file.settings) }, deps.base);
    } catch (e) {
      throw new ConfigError(`${where}: ${(e as Error).message}`);
    }
    const offsetMs = file.settings?.clock_offset === undefined ? 0 : parseSignedDuration(file.settings.clock_offset);
    const label = deps.sessionId === undefined ? `the clock of scenario '${file.name}'` : `the clock of session ${deps.sessionId}`;
    const clock = new SandboxClock({ parent: deps.parentClock, offsetMs, label });
    // A scenario that rotates its key starts on a key of its own: rotating away a shared key would
    // leave it published (other scenarios still use it) while this scenario refuses it.
    const rotates = (file.rules ?? []).some((r) => r.then.rotate_signing_key !== undefined);
    const startKey =
      deps.startKid !== undefined
        ? Promise.resolve(deps.ring.held(deps.startKid))
        : rotates
          ? deps.ring.generate(settings.algorithm)
          : deps.ring.startKey(settings.algorithm);
    const keys = new ScenarioKeys(deps.ring, deps.keysLater ? startKey : await startKey, rotates);

    const inputs = file.merchants.map(merchantInput);
    for (const input of inputs) {
      const found = deps.registry.clashWith(input);
      if (found) {
        // "merchant id", not "id": the sentence is about a scenario, which has a name of its own.
        const clash = `${found.identifier.name === "id" ? "merchant " : ""}${found.identifier.shown}`;
        const other = deps.owners.get(found.holder.id);
        // The built-in default loads last: word the clash from the user's scenario's side.
        if (source === "built-in" && other) {
          throw new ConfigError(
            `scenario '${other.name}' (${other.source}) uses the ${clash} of the built-in default scenario; to change the default merchant, name your scenario 'default', or give it credentials of its own`,
          );
        }
        throw new ConfigError(
          `${where} declares ${clash}, which scenario '${other?.name ?? "?"}' (${other?.source ?? "?"}) already uses; the credentials select the scenario, so each scenario needs its own`,
        );
      }
    }
    const merchants = inputs.map((input) => deps.registry.add(input));
    const instance = new ScenarioInstance({
      file,
      source,
      settings,
      clock,
      clockOffsetMs: offsetMs,
      keys,
      merchants,
      sessionId: deps.sessionId,
      profile: profile?.name ?? "oauth",
      shaper: profile?.shaper,
      tokenFormat: profile?.tokenFormat ?? DEFAULT_TOKEN_FORMAT,
      registry: deps.registry,
    });
    for (const m of merchants) deps.owners.set(m.id, instance);
    return instance;
  }

  /**
   * Back to how the scenario started: merchants as the file declares them, state `started`, rule
   * counts at zero, the start key, the login mode, and the clock at the sandbox's time plus the
   * file's clock_offset. (Revocations live in the sandbox's token ledger; a session reset clears
   * them by merchant, see the control plane.)
   */
  reset(): void {
    this.file.merchants.forEach((declared, i) => {
      const merchant = this.merchants[i]!;
      // Through the registry: the declared secret is held (redacted) again, the rotated ones let go.
      this.registry.restoreMerchant(merchant, {
        id: merchant.id,
        apiSecret: declared.api_secret,
        formerSecrets: [],
        paymentToken: merchant.paymentToken,
        disabled: declared.disabled ?? false,
      });
    });
    this.state = "started";
    // As created: the rules a session's actions added are gone, and their numbering starts again.
    this.rules.splice(0, this.pendingActionRules);
    this.pendingActionRules = 0;
    this.actionRulesAdded = 0;
    for (const rule of this.rules) rule.resetCount();
    this.keys.reset();
    this.settings.loginMode = this.initialLoginMode;
    this.clock.reset();
    this.clock.advance(this.clockOffsetMs);
    this.startedAtMs = this.clock.now();
  }

  /**
   * Adds a session's `next` rule (POST /__sandbox/sessions/{id}/actions) before the file's rules,
   * after the ones added earlier: named `action-<n>`, it fires for its calls and is then dropped.
   */
  addActionRule(rule: Omit<RuleFile, "name">): CompiledRule {
    const compiled = new CompiledRule({ ...rule, name: `action-${++this.actionRulesAdded}` }, 0);
    this.rules.splice(this.pendingActionRules++, 0, compiled);
    return compiled;
  }

  get actionRuleCount(): number {
    return this.pendingActionRules;
  }

  /** How many `next` rules were ever added (since the start or a reset): the `n` of the last `action-<n>`. */
  get actionRulesEverAdded(): number {
    return this.actionRulesAdded;
  }

  /**
   * Replaces the `next` rules still to fire, and the count of those ever added, with another
   * replica's (the scenario's shared state): the file's rules stay.
   */
  replaceActionRules(rules: readonly CompiledRule[], everAdded: number): void {
    if (!Number.isSafeInteger(everAdded) || everAdded < rules.length) {
      throw new RangeError(`scenario '${this.name}': ${everAdded} next rules ever added, fewer than the ${rules.length} still to fire`);
    }
    this.rules.splice(0, this.pendingActionRules, ...rules);
    this.pendingActionRules = rules.length;
    this.actionRulesAdded = everAdded;
  }

  /** The session's `next` rules still to fire, oldest first. */
  get actionRules(): readonly CompiledRule[] {
    return this.rules.slice(0, this.pendingActionRules);
  }

  /** Drops the `next` rules that can fire no more. */
  dropSpentActionRules(): void {
    for (let i = this.pendingActionRules - 1; i >= 0; i--) {
      if (!this.rules[i]!.spent) continue;
      this.rules.splice(i, 1);
      this.pendingActionRules--;
    }
  }

  /** Milliseconds since the scenario started, on its own clock. */
  elapsedMs(): number {
    return this.clock.now() - this.startedAtMs;
  }

  findMerchant(id: string): Merchant | undefined {
    return this.merchants.find((m) => m.id === id);
  }
}

function settingsInput(s: SettingsFile | undefined): SettingsInput {
  if (!s) return {};
  return {
    ...(s.token_ttl !== undefined && { tokenTtl: s.token_ttl }),
    ...(s.leeway !== undefined && { leeway: s.leeway }),
    ...(s.algorithm !== undefined && { algorithm: s.algorithm }),
    ...(s.credential_precedence !== undefined && { credentialPrecedence: s.credential_precedence }),
    ...(s.login_mode !== undefined && { loginMode: s.login_mode }),
    ...(s.login_token !== undefined && { loginToken: s.login_token }),
    ...(s.payment_token_transport !== undefined && { paymentTokenTransport: s.payment_token_transport }),
    ...(s.disabled_merchant_status !== undefined && { disabledMerchantStatus: s.disabled_merchant_status }),
  };
}

export function merchantInput(m: MerchantFile): MerchantInput {
  return {
    id: m.id,
    ...(m.name !== undefined && { name: m.name }),
    apiKey: m.api_key,
    apiSecret: m.api_secret,
    paymentToken: m.payment_token,
    ...(m.login !== undefined && { login: m.login }),
    ...(m.scopes !== undefined && { scopes: m.scopes }),
    ...(m.disabled !== undefined && { disabled: m.disabled }),
  };
}

/** The file form of a library-API merchant (createSandbox({ merchants })). */
export function merchantFile(m: MerchantInput): MerchantFile {
  return {
    id: m.id,
    ...(m.name !== undefined && { name: m.name }),
    api_key: m.apiKey,
    api_secret: m.apiSecret,
    payment_token: m.paymentToken,
    ...(m.login !== undefined && { login: m.login }),
    ...(m.scopes !== undefined && { scopes: m.scopes }),
    ...(m.disabled !== undefined && { disabled: m.disabled }),
  };
}
