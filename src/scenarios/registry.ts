import type { ProfileChooser } from "../core/answer-shaper.js";
import type { SandboxClock } from "../core/clock.js";
import type { PaymentTokenTransport, SandboxSettings } from "../core/config.js";
import type { ScenarioLookup } from "../core/context.js";
import type { KeyRing } from "../core/keys.js";
import type { Merchant, MerchantRegistry } from "../core/merchants.js";
import { ScenarioInstance } from "./instance.js";
import type { ScenarioFile } from "./schema.js";

/** The loaded scenarios and who owns which merchant: the registry as the pipeline and the control plane read it. */
export interface ScenarioSet extends ScenarioLookup {
  readonly all: readonly ScenarioInstance[];
  /** The scenarios loaded at start (not sessions' copies). */
  readonly loaded: readonly ScenarioInstance[];
  /** The scenario whose rules and settings apply to requests no merchant can be read from. */
  readonly primary: ScenarioInstance;
  of(merchant: Merchant): ScenarioInstance;
  /** Every place a payment token may be sent, across scenarios (attribution looks in each). */
  paymentTokenTransports(): PaymentTokenTransport[];
}

/**
 * The running scenarios of one sandbox: those loaded at start and the private copies that sessions
 * create and end at run time. It knows which scenario owns which merchant, and keeps the derived
 * lists (payment-token transports) current as scenarios come and go.
 */
export class ScenarioRegistry implements ScenarioSet {
  private readonly instances: ScenarioInstance[] = [];
  private readonly owners = new Map<string, ScenarioInstance>();
  private transportList: PaymentTokenTransport[] = [];

  constructor(
    private readonly deps: {
      base: SandboxSettings;
      parentClock: SandboxClock;
      ring: KeyRing;
      registry: MerchantRegistry;
      profileFor?: ProfileChooser;
    },
  ) {}

  /**
   * Builds a scenario and registers its merchants; the first one added is the primary. `profile`:
   * a session's choice. `keysLater`: do not wait for its start key (see ScenarioInstance.create).
   */
  async add(
    file: ScenarioFile,
    source: string,
    options: { sessionId?: string; profile?: string; keysLater?: boolean } = {},
  ): Promise<ScenarioInstance> {
    const instance = await ScenarioInstance.create(file, source, { ...this.deps, owners: this.owners, ...options });
    this.instances.push(instance);
    this.refresh();
    return instance;
  }

  /**
   * Ends a scenario (a session): its merchants' credentials stop working at once, and the keys it
   * generated leave the ring.
   */
  remove(instance: ScenarioInstance): void {
    const i = this.instances.indexOf(instance);
    if (i < 0) return;
    this.instances.splice(i, 1);
    instance.clock.detach();
    for (const m of instance.merchants) {
      this.deps.registry.remove(m);
      this.owners.delete(m.id);
    }
    instance.keys.release();
    this.refresh();
  }

  get all(): readonly ScenarioInstance[] {
    return this.instances;
  }

  /** The scenarios loaded at start (not sessions). */
  get loaded(): ScenarioInstance[] {
    return this.instances.filter((i) => i.sessionId === undefined);
  }

  get primary(): ScenarioInstance {
    return this.instances[0]!;
  }

  byName(name: string): ScenarioInstance | undefined {
    return this.instances.find((i) => i.name === name && i.sessionId === undefined);
  }

  of(merchant: Merchant): ScenarioInstance {
    return this.owners.get(merchant.id) ?? this.primary;
  }

  paymentTokenTransports(): PaymentTokenTransport[] {
    return this.transportList;
  }

  acceptedKids(): Set<string> {
    const kids = new Set<string>();
    for (const i of this.instances) for (const kid of i.keys.accepted) kids.add(kid);
    return kids;
  }

  /** No action changes a transport, so the list is remade only when scenarios come or go. */
  private refresh(): void {
    const seen = new Map<string, PaymentTokenTransport>();
    for (const i of this.instances) {
      const t = i.settings.paymentTokenTransport;
      seen.set(t.kind === "authorization" ? "authorization" : t.kind === "header" ? `header:${t.name}` : `body:${t.field}`, t);
    }
    this.transportList = [...seen.values()];
  }
}
