import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

/**
 * The repository's habits, held by files: CI runs `.ci/run` on every push and pull request.
 */

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
describe("CI workflow (.github/workflows/ci.yml)", () => {
  it("runs .ci/run on every push and pull request", () => {
    const workflow = parse(readFileSync(join(ROOT, ".github/workflows/ci.yml"), "utf8"));
    expect(Object.keys(workflow.on).sort()).toEqual(["pull_request", "push"]);
    expect(workflow.on.push).toBeNull();
    expect(workflow.on.pull_request).toBeNull();
    const steps = Object.values(workflow.jobs as Record<string, { steps: { run?: string }[] }>).flatMap((job) => job.steps);
    expect(steps.map((step) => step.run).filter(Boolean)).toEqual(["bash .ci/run"]);
  });
});
