import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import { Secret } from "kubernetes-models/v1/Secret";
import { Service } from "kubernetes-models/v1/Service";
import { parse, parseAllDocuments } from "yaml";
import { serveCommand } from "../../src/cli/commands/serve.js";
import { envNameOf, optionNames } from "../../src/cli/env.js";
import { EVENT_LIMIT_DEFAULTS } from "../../src/control/events.js";
import { checkHaproxyConfig, HAPROXY } from "../support/haproxy.js";
import { needsProgram } from "../support/system-program.js";

/**
 * The shared-deployment examples (issue 27; docs/deployment.md) say what a shared deployment needs:
 * every replica on the same state, health checks on /__sandbox/health, a balancer with no
 * stickiness, an admin token, and only settings the sandbox really reads. No Docker engine or
 * Kubernetes here: this parses them and checks what they say; haproxy itself checks haproxy.cfg.
 */

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const CLUSTER = join(ROOT, "examples", "cluster");
const HEALTH = "/__sandbox/health";
/** The variable the lead's `serve --state` reads; accepted here until it is a flag of serve (then envNameOf lists it). */
const STATE = "MERCHANT_SANDBOX_STATE";
// biome-ignore lint/suspicious/noExplicitAny: parsed YAML, checked field by field below.
type Yaml = any;

/** Every MERCHANT_SANDBOX_* variable serve reads: one per flag. */
const SERVE_VARIABLES = new Set([...optionNames(serveCommand(undefined) as never)].map((flag) => envNameOf(flag, "serve")));

/** The variables of `names` that serve would not read (and would warn about at start). */
const unknownVariables = (names: Iterable<string>) =>
  [...names].filter((n) => n.startsWith("MERCHANT_SANDBOX_") && n !== STATE && !SERVE_VARIABLES.has(n));

/** The port the image's sandbox listens on (the Dockerfile's MERCHANT_SANDBOX_PORT). */
const IMAGE_PORT = Number(/MERCHANT_SANDBOX_PORT=(\d+)/.exec(readFileSync(join(ROOT, "Dockerfile"), "utf8"))![1]);

/** A duration as haproxy writes it (30s, 1h, 200ms, or bare milliseconds), in milliseconds. */
function haproxyMs(value: string): number {
  const m = /^(\d+)(us|ms|s|m|h|d)?$/.exec(value);
  if (!m) throw new Error(`not a haproxy duration: ${value}`);
  const unit = { us: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] ?? "ms"]!;
  return Number(m[1]) * unit;
}

/** haproxy.cfg as sections: `backend sandboxes` → its lines, trimmed, comments and blank lines out. */
function sections(cfg: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const raw of cfg.split("\n")) {
    const line = raw.replace(/#.*$/, "").trim();
    if (line === "") continue;
    if (!/^\s/.test(raw)) {
      current = [];
      out.set(line, current);
    } else current?.push(line);
  }
  return out;
}

describe("examples/cluster/docker-compose.yml", () => {
  const compose: Yaml = parse(readFileSync(join(CLUSTER, "docker-compose.yml"), "utf8"), { strict: true, uniqueKeys: true });
  const names = Object.keys(compose.services).filter((n) => n.startsWith("sandbox-"));
  const replicas = names.map((n) => compose.services[n]);

  it("runs three replicas of the image built from the repository's Dockerfile, restarted when they die", () => {
    expect(names).toEqual(["sandbox-1", "sandbox-2", "sandbox-3"]);
    for (const r of replicas) {
      expect(existsSync(join(resolve(CLUSTER, r.build.context), r.build.dockerfile))).toBe(true);
      expect(r.build.dockerfile).toBe("Dockerfile");
      expect(r.image).toBe("merchant-sandbox:local");
      expect(r.restart).toBe("unless-stopped");
    }
  });

  it("points every replica at the same Redis 7, started first and health-checked", () => {
    const urls = replicas.map((r) => r.environment[STATE]);
    expect(urls).toEqual(["redis://redis:6379", "redis://redis:6379", "redis://redis:6379"]);
    const redis = compose.services.redis;
    expect(redis.image).toBe("docker.io/library/redis:7");
    expect(redis.healthcheck.test).toEqual(["CMD", "redis-cli", "ping"]);
    for (const r of replicas) expect(r.depends_on).toEqual({ redis: { condition: "service_healthy" } });
  });

  it("gives every replica the same admin token, from the environment (compose stops without it), never one written in the file", () => {
    const tokens = replicas.map((r) => r.environment.MERCHANT_SANDBOX_ADMIN_TOKEN);
    expect(new Set(tokens).size).toBe(1);
    expect(tokens[0]).toMatch(/^\$\{MERCHANT_SANDBOX_ADMIN_TOKEN:\?set MERCHANT_SANDBOX_ADMIN_TOKEN \(16\+ characters\) .*\}$/);
  });

  it("health-checks every replica on /__sandbox/health, and sets only variables serve reads", () => {
    for (const r of replicas) {
      expect(r.healthcheck.test.join(" ")).toContain(`http://127.0.0.1:${IMAGE_PORT}${HEALTH}`);
      expect(unknownVariables(Object.keys(r.environment))).toEqual([]);
    }
  });

  it("puts haproxy 2.6 with haproxy.cfg in front, published on loopback, once every replica is healthy", () => {
    const haproxy = compose.services.haproxy;
    expect(haproxy.image).toBe("docker.io/library/haproxy:2.6");
    expect(haproxy.volumes).toEqual(["./haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro"]);
    expect(haproxy.ports).toEqual(["127.0.0.1:4010:4010"]);
    expect(haproxy.depends_on).toEqual(Object.fromEntries(names.map((n) => [n, { condition: "service_healthy" }])));
    // Only haproxy is published: a client cannot reach one replica around it.
    for (const r of replicas) expect(r.ports).toBeUndefined();
  });
});

describe("the compose files' images", () => {
  /** A name podman pulls without guessing a registry: registry host (with a dot or a port), path, tag. */
  const qualified = /^[a-z0-9-]+(\.[a-z0-9-]+)+(:\d+)?\/[a-z0-9._/-]+:[\w.-]+$/;
  it.each([
    "examples/cluster/docker-compose.yml",
    "examples/docker-compose.yml",
  ])("%s names every image it pulls in full (registry/name:tag): podman has no default registry for a short name", (file) => {
    const services: Record<string, Yaml> = parse(readFileSync(join(ROOT, file), "utf8")).services;
    // An image another service builds is local, not pulled.
    const built = new Set(
      Object.values(services)
        .filter((s) => s.build !== undefined)
        .map((s) => s.image),
    );
    const pulled = Object.entries(services).filter(([, s]) => !built.has(s.image));
    expect(pulled.length).toBeGreaterThan(0);
    expect(pulled.filter(([, s]) => !qualified.test(s.image)).map(([name, s]) => `${name}: ${s.image}`)).toEqual([]);
  });
});

describe("examples/cluster/haproxy.cfg", () => {
  const cfg = readFileSync(join(CLUSTER, "haproxy.cfg"), "utf8");
  const parts = sections(cfg);
  const backend = parts.get("backend sandboxes")!;
  const defaults = parts.get("defaults")!;
  const compose: Yaml = parse(readFileSync(join(CLUSTER, "docker-compose.yml"), "utf8"));

  it("takes the replicas in turns with no stickiness: no cookie, stick table, hash or source balancing", () => {
    expect(backend).toContain("balance roundrobin");
    const sticky = cfg.split("\n").filter((l) => /^\s*(cookie|stick|stick-table|hash-type|persist|balance\s+(?!roundrobin\b))/.test(l));
    expect(sticky).toEqual([]);
  });

  it("health-checks every replica with GET /__sandbox/health, up only on a 200", () => {
    expect(backend).toContain(`option httpchk GET ${HEALTH}`);
    expect(backend).toContain("http-check expect status 200");
    const defaultServer = backend.find((l) => l.startsWith("default-server "))!;
    expect(defaultServer.split(/\s+/)).toContain("check");
  });

  it("sends to exactly the compose file's replicas, on the port the image listens on, resolving their names late", () => {
    const servers = backend.filter((l) => l.startsWith("server ")).map((l) => l.split(/\s+/).slice(1, 3).join(" "));
    expect(servers).toEqual(["sandbox-1 sandbox-1:4010", "sandbox-2 sandbox-2:4010", "sandbox-3 sandbox-3:4010"]);
    expect(Object.keys(compose.services).filter((n) => n.startsWith("sandbox-"))).toEqual(servers.map((s) => s.split(" ")[0]));
    expect(IMAGE_PORT).toBe(4010);
    expect(backend.find((l) => l.startsWith("default-server "))).toMatch(/ init-addr last,libc,none\b/);
    expect(parts.get("frontend merchant-api")).toContain("bind :4010");
  });

  it("keeps a quiet event stream open: the server timeout is above the sandbox's keep-alive, and there is a tunnel timeout", () => {
    const timeout = (name: string) => haproxyMs(defaults.find((l) => l.startsWith(`timeout ${name} `))!.split(/\s+/)[2]!);
    expect(timeout("server")).toBeGreaterThan(EVENT_LIMIT_DEFAULTS.heartbeatMs);
    expect(timeout("client")).toBeGreaterThan(EVENT_LIMIT_DEFAULTS.heartbeatMs);
    expect(timeout("tunnel")).toBeGreaterThanOrEqual(timeout("server"));
  });

  it("retries only a connection that failed (the request never reached a replica), never a request sent", () => {
    expect(cfg).not.toMatch(/^\s*retry-on\b/m);
    expect(defaults).toContain("option redispatch 1");
  });

  describe("haproxy -c", () => {
    const present = needsProgram(HAPROXY);
    it.runIf(present)("haproxy accepts the file as it is", () => {
      const { ok, output } = checkHaproxyConfig(join(CLUSTER, "haproxy.cfg"));
      expect(output).toContain("Configuration file is valid");
      expect(ok).toBe(true);
    });
  });
});

describe("examples/kubernetes/merchant-sandbox.yaml", () => {
  const docs: Yaml[] = parseAllDocuments(readFileSync(join(ROOT, "examples", "kubernetes", "merchant-sandbox.yaml"), "utf8"), {
    strict: true,
    uniqueKeys: true,
  }).map((d) => ("toJS" in d ? d.toJS() : undefined));
  const find = (kind: string, name: string): Yaml => docs.find((d) => d?.kind === kind && d.metadata.name === name);
  const secret = find("Secret", "merchant-sandbox");
  const sandbox = find("Deployment", "merchant-sandbox");
  const redis = find("Deployment", "merchant-sandbox-redis");
  const container = sandbox.spec.template.spec.containers[0];
  const env: Array<{ name: string; value?: string; valueFrom?: Yaml }> = container.env;
  const envOf = (name: string) => env.find((e) => e.name === name)!;

  it("is valid against the Kubernetes API's schemas, document by document (kubernetes-models 4.5.1)", () => {
    const models: Record<string, new (data: Yaml) => { validate(): void }> = {
      "v1/Secret": Secret,
      "v1/Service": Service,
      "apps/v1/Deployment": Deployment,
    };
    const problems = docs.flatMap((d) => {
      const Model = models[`${d.apiVersion}/${d.kind}`];
      if (!Model) return [`${d.apiVersion} ${d.kind}: no schema here; add its model to this test`];
      try {
        new Model(d).validate();
        return [];
      } catch (error) {
        return [`${d.kind}/${d.metadata?.name}: ${(error as Error).message}`];
      }
    });
    expect(problems).toEqual([]);
  });

  it("holds a Secret, the sandbox's Deployment and Service, and Redis's Deployment and Service", () => {
    expect(docs.map((d) => `${d.kind}/${d.metadata.name}`)).toEqual([
      "Secret/merchant-sandbox",
      "Deployment/merchant-sandbox-redis",
      "Service/merchant-sandbox-redis",
      "Deployment/merchant-sandbox",
      "Service/merchant-sandbox",
    ]);
  });

  it("runs three replicas of the sandbox image, all on the state URL of the Redis Service, its password from the Secret", () => {
    expect(sandbox.spec.replicas).toBe(3);
    expect(container.image).toBe("ghcr.io/your-org/merchant-sandbox:0.1.0");
    expect(container.ports).toEqual([{ name: "http", containerPort: IMAGE_PORT }]);
    const redisService = find("Service", "merchant-sandbox-redis");
    const url = new URL(envOf(STATE).value!);
    expect(url.protocol).toBe("redis:");
    expect(`${url.hostname}:${url.port}`).toBe(`${redisService.metadata.name}:${redisService.spec.ports[0].port}`);
    expect(url.password).toBe("$(REDIS_PASSWORD)");
    // Kubernetes expands $(REDIS_PASSWORD) only from a variable defined before it.
    expect(env.findIndex((e) => e.name === "REDIS_PASSWORD")).toBeLessThan(env.findIndex((e) => e.name === STATE));
    expect(envOf("REDIS_PASSWORD").valueFrom).toEqual({ secretKeyRef: { name: "merchant-sandbox", key: "redis-password" } });
  });

  it("starts Redis 7 with the same password, selected by its Service", () => {
    const r = redis.spec.template.spec.containers[0];
    expect(r.image).toBe("docker.io/library/redis:7");
    expect(r.args.slice(0, 2)).toEqual(["--requirepass", "$(REDIS_PASSWORD)"]);
    expect(r.env).toEqual([{ name: "REDIS_PASSWORD", valueFrom: { secretKeyRef: { name: "merchant-sandbox", key: "redis-password" } } }]);
    const service = find("Service", "merchant-sandbox-redis");
    expect(service.spec.selector).toEqual(redis.spec.template.metadata.labels);
    expect(redis.spec.selector.matchLabels).toEqual(redis.spec.template.metadata.labels);
    expect(service.spec.ports[0].targetPort).toBe(r.ports[0].name);
  });

  it("takes the admin token from the Secret, whose placeholder is too short for the sandbox to start on", () => {
    expect(envOf("MERCHANT_SANDBOX_ADMIN_TOKEN").valueFrom).toEqual({ secretKeyRef: { name: "merchant-sandbox", key: "admin-token" } });
    expect(Object.keys(secret.stringData).sort()).toEqual(["admin-token", "redis-password"]);
    expect(secret.stringData["admin-token"].length).toBeLessThan(16);
  });

  it("checks readiness and liveness on /__sandbox/health, liveness given far longer than readiness", () => {
    for (const probe of [container.readinessProbe, container.livenessProbe]) expect(probe.httpGet).toEqual({ path: HEALTH, port: "http" });
    const patience = (p: Yaml) => p.periodSeconds * p.failureThreshold;
    expect(patience(container.livenessProbe)).toBeGreaterThanOrEqual(30 * patience(container.readinessProbe));
  });

  it("serves every replica through one Service with no session affinity, and sets only variables serve reads", () => {
    const service = find("Service", "merchant-sandbox");
    expect(service.spec.sessionAffinity).toBe("None");
    expect(service.spec.selector).toEqual(sandbox.spec.template.metadata.labels);
    expect(sandbox.spec.selector.matchLabels).toEqual(sandbox.spec.template.metadata.labels);
    expect(service.spec.ports).toEqual([{ name: "http", port: IMAGE_PORT, targetPort: "http" }]);
    expect(unknownVariables(env.map((e) => e.name))).toEqual([]);
    expect(env.map((e) => e.name)).toEqual(["REDIS_PASSWORD", STATE, "MERCHANT_SANDBOX_ADMIN_TOKEN", "MERCHANT_SANDBOX_ALLOWED_HOSTS"]);
  });
});

describe("unknownVariables: the check the examples' variables go through", () => {
  it("lets serve's variables and MERCHANT_SANDBOX_STATE through, and names any other", () => {
    expect(unknownVariables(["MERCHANT_SANDBOX_ADMIN_TOKEN", "MERCHANT_SANDBOX_PORT", STATE, "REDIS_PASSWORD"])).toEqual([]);
    expect(unknownVariables(["MERCHANT_SANDBOX_ADMIN_TOKN", "MERCHANT_SANDBOX_URL"])).toEqual([
      "MERCHANT_SANDBOX_ADMIN_TOKN",
      "MERCHANT_SANDBOX_URL",
    ]);
  });
});
