import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

/**
 * The CI examples have the structure their README promises (issue 16). No Docker engine or CI
 * runner here: snippets.test.ts checks that they parse; this checks what they say.
 */

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const EXAMPLES = join(ROOT, "examples");
// biome-ignore lint/suspicious/noExplicitAny: parsed YAML, checked field by field below.
const load = (file: string): any => parse(readFileSync(join(EXAMPLES, file), "utf8"), { strict: true, uniqueKeys: true });
const HEALTH = "/__sandbox/health";

describe("examples/docker-compose.yml", () => {
  const compose = load("docker-compose.yml");

  it("builds the sandbox from the repository's Dockerfile and health-checks it on /__sandbox/health", () => {
    const sandbox = compose.services.sandbox;
    expect(existsSync(join(resolve(EXAMPLES, sandbox.build.context), sandbox.build.dockerfile))).toBe(true);
    expect(sandbox.healthcheck.test.join(" ")).toContain(`http://127.0.0.1:4010${HEALTH}`);
  });

  it("runs the sample integration's tests in node:22 once the sandbox is healthy, then the two gates once they passed", () => {
    const tests = compose.services["integration-tests"];
    expect(tests.image).toMatch(/^docker\.io\/library\/node:22/);
    expect(tests.depends_on).toEqual({ sandbox: { condition: "service_healthy" } });
    expect(tests.volumes[0]).toBe("./sample-integration:/app:ro");
    expect(existsSync(join(EXAMPLES, "sample-integration", "scripts", "with-session.mjs"))).toBe(true);
    expect(tests.environment.MERCHANT_SANDBOX_URL).toBe("http://sandbox:4010");
    const gates = compose.services.gates;
    expect(gates.image).toBe(compose.services.sandbox.image);
    expect(gates.depends_on).toEqual({ "integration-tests": { condition: "service_completed_successfully" } });
    expect(gates.command[0]).toMatch(/report --url http:\/\/sandbox:4010 --session .* && .* scan-logs --url http:\/\/sandbox:4010 /);
  });
});

describe("examples/github-actions/merchant-api.yml", () => {
  const workflow = load("github-actions/merchant-api.yml");
  const job = workflow.jobs["merchant-api"];

  it("runs the sandbox image as a health-gated service container", () => {
    expect(job["runs-on"]).toBe("ubuntu-latest");
    expect(job.services.sandbox.image).toContain("ghcr.io/your-org/merchant-sandbox:0.1.0");
    expect(job.services.sandbox.ports).toEqual(["4010:4010"]);
    expect(job.services.sandbox.options).toMatch(new RegExp(`^--health-cmd ".*${HEALTH}.*" --health-interval`));
  });

  it("creates a session, exports its base URL and credentials, runs the tests, then the report and scan-logs gates", () => {
    const steps: Array<{ name?: string; run?: string; if?: string; "working-directory"?: string }> = job.steps;
    const runs = steps.map((s) => s.run ?? "").join("\n");
    expect(runs).toContain('-X POST "$SANDBOX/__sandbox/sessions"');
    for (const name of ["MERCHANT_API_BASE_URL", "MERCHANT_API_KEY", "MERCHANT_API_SECRET", "MERCHANT_PAYMENT_TOKEN"]) {
      expect(runs).toContain(`echo "${name}=`);
    }
    const tests = steps.find((s) => s["working-directory"] === "examples/sample-integration")!;
    expect(tests.run).toContain("node --test");
    const [report, scan] = steps.slice(-2);
    expect(report!.run).toMatch(/report --url "\$SANDBOX" --session "\$\{\{ steps\.session\.outputs\.id \}\}"$/);
    expect(scan!.run).toMatch(/scan-logs --url "\$SANDBOX" \/logs\/app\.log \/logs\/integration-tests\.log$/);
    // GitHub's expression syntax, not a template placeholder.
    const always = "$" + "{{ !cancelled() }}";
    expect([report!.if, scan!.if]).toEqual([always, always]);
  });
});

describe("examples/gitlab-ci/.gitlab-ci.yml", () => {
  const pipeline = load("gitlab-ci/.gitlab-ci.yml");
  const job = pipeline["merchant-api"];

  it("runs the sandbox image as a service with the alias the script calls it by", () => {
    expect(job.services).toEqual([{ name: "$MERCHANT_SANDBOX_IMAGE", alias: "sandbox" }]);
    expect(pipeline.variables.MERCHANT_SANDBOX_IMAGE).toBe("ghcr.io/your-org/merchant-sandbox:0.1.0");
    expect(pipeline.variables.SANDBOX).toBe("http://sandbox:4010");
  });

  it("waits for health, creates a session, exports it, runs the tests, then the report and scan-logs gates", () => {
    const script: string = job.script.join("\n");
    const order = [HEALTH, "/__sandbox/sessions", "export MERCHANT_API_BASE_URL", "node --test", " report --url", " scan-logs --url", "exit $status"];
    const at = order.map((s) => script.indexOf(s));
    expect(at.every((i) => i >= 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
  });
});
