import { basename } from "node:path";
import type { Finding } from "../control/findings/finding.js";
import type { SessionInfo } from "../control/session-info.js";
import { adminTokenSetting } from "../control/access.js";
import { parseRedisUrl } from "../store/redis-url.js";
import { loadTestcontainers } from "./testcontainers-peer.js";

/**
 * The sandbox's image as a Testcontainers module, in the style of testcontainers-node's own
 * (packages/modules/redis/src/redis-container.ts, v11.14.0): a `GenericContainer` with the
 * sandbox's settings as `with…` methods, whose `start()` answers a started container that knows the
 * sandbox's control plane.
 *
 *   const sandbox = await new MerchantSandboxContainer("merchant-sandbox").withScenario("token-expires-after-calls").start();
 *   const session = await sandbox.createSession();
 *   // … the integration's tests against session.base_url …
 *   const { findings } = await sandbox.report(session.id);
 *   await sandbox.stop();
 *
 * It waits for GET /__sandbox/health to answer 200, not for the image's HEALTHCHECK: an engine that
 * runs no health checks (podman without systemd) never reports the container healthy. It publishes
 * the port on 127.0.0.1, so the sandbox's control plane is reachable from this machine only;
 * `withBindAddress("0.0.0.0")` for an engine on another machine (DOCKER_HOST=tcp://…).
 */

const { GenericContainer, AbstractStartedContainer, Wait } = loadTestcontainers();
type StartedTestContainer = import("testcontainers").StartedTestContainer;

/** The port the image listens on (MERCHANT_SANDBOX_PORT in the Dockerfile). */
export const SANDBOX_PORT = 4010;

/** What `docker build -t merchant-sandbox .` in the repository tags; a release publishes ghcr.io/<owner>/merchant-sandbox:<version>. */
export const DEFAULT_IMAGE = "merchant-sandbox";

/** Where a profile or scenario file of this machine is copied to inside the container. */
const FILES_DIR = "/sandbox/files";

/** A scenario or profile given by path (it has a slash or a YAML/JSON extension), not a built-in name. */
const isFile = (value: string) => value.includes("/") || /\.(ya?ml|json)$/i.test(value);

/** A setting checked as `serve` checks it, its refusal (which never quotes a secret) named after the method. */
function settingOrThrow<T>(method: string, check: () => T): T {
  try {
    return check();
  } catch (error) {
    throw new Error(`${method}: ${(error as Error).message}`, { cause: error });
  }
}

export class MerchantSandboxContainer extends GenericContainer {
  private readonly scenarios: string[] = [];
  private profile: string | undefined;
  private adminToken: string | undefined;
  private bindAddress = "127.0.0.1";
  private ownCommand = false;
  private copied = 0;

  constructor(image = DEFAULT_IMAGE) {
    super(image);
    this.withExposedPorts(SANDBOX_PORT)
      // A sandbox that refuses its settings exits at once: fail then, with its last lines (which say
      // what to fix), not after the startup timeout.
      .withWaitStrategy(Wait.forHttp("/__sandbox/health", SANDBOX_PORT, { abortOnContainerExit: true }).forStatusCode(200))
      .withStartupTimeout(60_000);
  }

  /**
   * Builds the image from a checkout's Dockerfile (`context`, the repository's root) through the
   * engine, tags it `image` and answers a container of it: for testing the sandbox's own source,
   * or a fork, instead of a published image. The image stays after the tests (the engine's build
   * cache makes the next build quick); nothing pulls it.
   */
  static async build(context: string, image = DEFAULT_IMAGE): Promise<MerchantSandboxContainer> {
    await GenericContainer.fromDockerfile(context).build(image, { deleteOnExit: false });
    return new MerchantSandboxContainer(image);
  }

  /**
   * A scenario: a library name (`merchant-sandbox scenarios` lists them) or a YAML/JSON file of this
   * machine, copied into the container. Repeatable; the first is the primary one.
   */
  withScenario(nameOrFile: string): this {
    this.scenarios.push(this.inContainer(nameOrFile));
    return this;
  }

  /** The response profile: a built-in name (lexik, spring, …) or a profile file of this machine (what `calibrate` wrote). */
  withProfile(nameOrFile: string): this {
    this.profile = this.inContainer(nameOrFile);
    return this;
  }

  /** Require this token on the control plane (the sandbox's own rule: 16 characters or more); the started container sends it. */
  withAdminToken(token: string): this {
    this.adminToken = settingOrThrow("withAdminToken", () => adminTokenSetting(token));
    return this.withEnvironment({ MERCHANT_SANDBOX_ADMIN_TOKEN: token });
  }

  /** Share state with other replicas through Redis: redis://[:password@]host:port[/db], read as `serve --state` reads it (docs/deployment.md). */
  withState(url: string): this {
    settingOrThrow("withState", () => parseRedisUrl(url));
    return this.withEnvironment({ MERCHANT_SANDBOX_STATE: url });
  }

  /** The host address the port is published on: 127.0.0.1 (default), or 0.0.0.0 for an engine on another machine. */
  withBindAddress(address: string): this {
    this.bindAddress = address;
    return this;
  }

  /** A command of your own replaces `serve` and the flags withScenario and withProfile make. */
  override withCommand(command: string[]): this {
    this.ownCommand = true;
    return super.withCommand(command);
  }

  override async start(): Promise<StartedMerchantSandboxContainer> {
    if (!this.ownCommand) {
      const args = [...this.scenarios.flatMap((s) => ["--scenario", s]), ...(this.profile ? ["--profile", this.profile] : [])];
      super.withCommand(["serve", ...args]);
    }
    // The sandbox's port on the bind address, on the host port asked for if any
    // (withExposedPorts({ container: 4010, host: N })); the other ports' bindings stay.
    const sandboxPort = `${SANDBOX_PORT}/tcp`;
    const hostPort = this.hostConfig.PortBindings?.[sandboxPort]?.[0]?.HostPort ?? "0";
    this.hostConfig.PortBindings = { ...this.hostConfig.PortBindings, [sandboxPort]: [{ HostIp: this.bindAddress, HostPort: hostPort }] };
    // When the sandbox exits at start, testcontainers reads its last lines over a socket it unrefs
    // (docker-container-client.js, v11.14.0): with nothing else pending, as in a bare `node --test`
    // file, the process ended before start() could reject with them.
    const keepAlive = setInterval(() => {}, 60_000);
    try {
      return new StartedMerchantSandboxContainer(await super.start(), this.adminToken);
    } finally {
      clearInterval(keepAlive);
    }
  }

  /** A file path is copied in (readable by the image's user) and named by its path inside; a name stays as it is. */
  private inContainer(nameOrFile: string): string {
    if (!isFile(nameOrFile)) return nameOrFile;
    const target = `${FILES_DIR}/${this.copied++}-${basename(nameOrFile)}`;
    this.withCopyFilesToContainer([{ source: nameOrFile, target, mode: 0o644 }]);
    return target;
  }
}

export class StartedMerchantSandboxContainer extends AbstractStartedContainer {
  constructor(
    started: StartedTestContainer,
    private readonly adminToken: string | undefined,
  ) {
    super(started);
  }

  /** http://<host>:<mapped port>: the merchant API at its root, the control plane under /__sandbox/. */
  getBaseUrl(): string {
    return `http://${this.getHost()}:${this.getMappedPort(SANDBOX_PORT)}`;
  }

  /** POST /__sandbox/sessions: a session with its own merchants, state and clock; configure the integration with its base_url and merchant. */
  async createSession(options: { scenario?: string; profile?: string } = {}): Promise<SessionInfo> {
    return (await this.control("POST", "/__sandbox/sessions", options)) as SessionInfo;
  }

  /** GET /__sandbox/sessions/{id}/report: what the integration did wrong on that session (docs/findings.md). */
  async report(sessionId: string): Promise<{ session: string; findings: Finding[] }> {
    return (await this.control("GET", `/__sandbox/sessions/${encodeURIComponent(sessionId)}/report`)) as {
      session: string;
      findings: Finding[];
    };
  }

  private async control(method: string, path: string, body?: object): Promise<unknown> {
    const headers: Record<string, string> = {};
    if (this.adminToken) headers.authorization = `Bearer ${this.adminToken}`;
    if (body) headers["content-type"] = "application/json";
    const response = await fetch(`${this.getBaseUrl()}${path}`, { method, headers, body: body ? JSON.stringify(body) : undefined });
    const text = await response.text();
    if (!response.ok) {
      // The control plane's refusals are problem+json that say what to fix; pass that on.
      throw new Error(`${method} ${path}: the sandbox answered ${response.status}: ${text}`);
    }
    return JSON.parse(text);
  }
}
