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
  // Sessions come and go by the thousand: adding or removing one costs O(1), whatever the number
  // of scenarios running (each session creation used to scan them all, twice).
  private readonly instances = new Set<ScenarioInstance>();
  /** `instances` as an array, made when first asked for after a change (`all` is rarely read). */
  private allList: ScenarioInstance[] | undefined = [];
  private readonly loadedList: ScenarioInstance[] = [];
  private readonly loadedByName = new Map<string, ScenarioInstance>();
  private readonly owners = new Map<string, ScenarioInstance>();
  /** Each payment-token transport in use, with the scenarios using it, in the order they came. */
  private readonly transportUsers = new Map<string, { transport: PaymentTokenTransport; users: Set<ScenarioInstance> }>();
  /**
   * The transportUsers key each scenario was filed under when it came: `remove` finds its entry by
   * this, not by its settings of the moment, which a later change could make point at no entry.
   */
  private readonly transportKeyOf = new Map<ScenarioInstance, string>();
  /** When each scenario came, to order the transports by the first scenario that uses each. */
  private readonly arrival = new Map<ScenarioInstance, number>();
  private arrivals = 0;
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
   * a session's choice. `keysLater`: do not wait for its start key; `startKid`: start on this key
   * of the ring (see ScenarioInstance.create).
   */
  async add(
    file: ScenarioFile,
    source: string,
    options: { sessionId?: string; profile?: string; keysLater?: boolean; startKid?: string } = {},
  ): Promise<ScenarioInstance> {
    const instance = await ScenarioInstance.create(file, source, { ...this.deps, owners: this.owners, ...options });
    this.instances.add(instance);
    this.allList = undefined;
    this.arrival.set(instance, this.arrivals++);
    if (instance.sessionId === undefined) {
      this.loadedList.push(instance);
      if (!this.loadedByName.has(instance.name)) this.loadedByName.set(instance.name, instance);
    }
    const key = transportKey(instance.settings.paymentTokenTransport);
    this.transportKeyOf.set(instance, key);
    const entry = this.transportUsers.get(key);
    if (entry) entry.users.add(instance);
    else {
      this.transportUsers.set(key, { transport: instance.settings.paymentTokenTransport, users: new Set([instance]) });
      this.refreshTransports();
    }
    return instance;
  }

  /**
   * Ends a scenario (a session): its merchants' credentials stop working at once, and the keys it
   * generated leave the ring.
   */
  remove(instance: ScenarioInstance): void {
    if (!this.instances.delete(instance)) return;
    this.allList = undefined;
    if (instance.sessionId === undefined) {
      this.loadedList.splice(this.loadedList.indexOf(instance), 1);
      if (this.loadedByName.get(instance.name) === instance) {
        this.loadedByName.delete(instance.name);
        const next = this.loadedList.find((i) => i.name === instance.name);
        if (next) this.loadedByName.set(next.name, next);
      }
    }
    instance.clock.detach();
    for (const m of instance.merchants) {
      this.deps.registry.remove(m);
      this.owners.delete(m.id);
    }
    instance.keys.release();
    const key = this.transportKeyOf.get(instance)!;
    this.transportKeyOf.delete(instance);
    const entry = this.transportUsers.get(key)!;
    const wasFirst = entry.users.values().next().value === instance;
    entry.users.delete(instance);
    if (entry.users.size === 0) this.transportUsers.delete(key);
    if (wasFirst) this.refreshTransports();
    this.arrival.delete(instance);
  }

  get all(): readonly ScenarioInstance[] {
    this.allList ??= [...this.instances];
    return this.allList;
  }

  /** The scenarios loaded at start (not sessions). */
  get loaded(): readonly ScenarioInstance[] {
    return this.loadedList;
  }

  get primary(): ScenarioInstance {
    return this.instances.values().next().value!;
  }

  byName(name: string): ScenarioInstance | undefined {
    return this.loadedByName.get(name);
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

  /**
   * Every transport in use, each once, in the order of the first scenario that uses it (the order
   * attribution tries them in). Remade only when a transport comes or its first user goes.
   */
  private refreshTransports(): void {
    const firstArrival = (users: Set<ScenarioInstance>) => this.arrival.get(users.values().next().value!)!;
    this.transportList = [...this.transportUsers.values()]
      .sort((a, b) => firstArrival(a.users) - firstArrival(b.users))
      .map((entry) => entry.transport);
  }
}

function transportKey(t: PaymentTokenTransport): string {
  return t.kind === "authorization" ? "authorization" : t.kind === "header" ? `header:${t.name}` : `body:${t.field}`;
}
