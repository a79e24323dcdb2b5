import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { beforeAll, beforeEach } from "vitest";
import { needsProgram, type SystemProgram } from "./system-program.js";

/**
 * A Docker-compatible engine for the Testcontainers test: the one DOCKER_HOST names (a unix socket), else podman's
 * API started by the shared `image-check socket` tool beside the clone (these machines run no Docker
 * engine). The tool prints `PID unix://PATH`; that PID, and only it, is stopped afterwards.
 */

/** The shared tool beside the clone, as .ci/run finds it for the image smoke, or IMAGE_CHECK. */
const IMAGE_CHECK = process.env.IMAGE_CHECK ?? fileURLToPath(new URL("../../../shared/tools/image-check", import.meta.url));

export const CONTAINER_ENGINE: SystemProgram = {
  name: "A Docker-compatible engine (image-check)",
  path: IMAGE_CHECK,
  install:
    "set DOCKER_HOST to a Docker engine's unix socket, or put the shared image-check tool (buildah and podman) at ../shared/tools/image-check (or set IMAGE_CHECK to it)",
};

/**
 * How long the tool may take on a fresh machine: it installs podman from Debian's packages and makes
 * its stand-in node:22 base image (debootstrap) once. A guard against hangs, not a figure asserted.
 */
export const ENGINE_START_GUARD_MS = 600_000;

export interface ContainerEngine {
  /** What Docker clients are given: unix:///…/podman.sock, or the DOCKER_HOST set outside. */
  dockerHost: string;
  /** Stops podman's API when this helper started it (SIGTERM to its PID); nothing otherwise. */
  stop(): Promise<void>;
}

/**
 * Registers the skip (or, under CI, the failure) when there is no engine; answers whether there is
 * one. A DOCKER_HOST counts only as a unix socket of this machine: the tests read the engine over it
 * and reach the published ports on 127.0.0.1. `CONTAINER_TESTS=skip` is a CI job's own statement
 * that it has no engine (the GitHub workflows run in a container without one), so even under CI the
 * tests are skipped, with one line saying so.
 */
export function needsContainerEngine(): boolean {
  if (process.env.CONTAINER_TESTS === "skip") {
    beforeAll(() => {
      process.stderr.write("skipped: CONTAINER_TESTS=skip: this job says it has no container engine\n");
    });
    beforeEach((context) => {
      context.skip();
    });
    return false;
  }
  return localDockerHost() !== undefined || needsProgram(CONTAINER_ENGINE);
}

/** DOCKER_HOST when it is a unix socket (unix:///path), else undefined. */
function localDockerHost(): string | undefined {
  const given = process.env.DOCKER_HOST;
  return given?.startsWith("unix://") ? given : undefined;
}

export async function startContainerEngine(): Promise<ContainerEngine> {
  const given = localDockerHost();
  if (given) return { dockerHost: given, stop: async () => {} };
  const dir = mkdtempSync(join(tmpdir(), "engine-"));
  const { stdout } = await promisify(execFile)(IMAGE_CHECK, ["socket", join(dir, "podman.sock")], { timeout: ENGINE_START_GUARD_MS });
  const [pid, dockerHost] = stdout.trim().split(" ");
  if (!pid || !/^\d+$/.test(pid) || !dockerHost?.startsWith("unix://"))
    throw new Error(`image-check socket printed ${JSON.stringify(stdout)}, not "PID unix://PATH"`);
  return {
    dockerHost,
    stop: async () => {
      try {
        process.kill(Number(pid), "SIGTERM");
      } catch {
        // already gone
      }
      for (let i = 0; i < 100 && isAlive(Number(pid)); i++) await new Promise((r) => setTimeout(r, 50));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The variables Testcontainers needs against this engine: no Ryuk (its image is on Docker Hub), loopback as the host. */
export function testcontainersEnv(engine: ContainerEngine): Record<string, string> {
  return { DOCKER_HOST: engine.dockerHost, TESTCONTAINERS_RYUK_DISABLED: "true", TESTCONTAINERS_HOST_OVERRIDE: "127.0.0.1" };
}
