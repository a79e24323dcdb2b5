import { existsSync } from "node:fs";
import { beforeAll, beforeEach } from "vitest";

/**
 * A test that needs a program of the system (chromium, redis-server, haproxy), not of npm: on a
 * machine with only Node, `npm test` still passes, and the tests that need a missing program are
 * skipped with one line naming the Debian package that brings it. Under CI=true a missing program
 * fails them instead: .ci/run installs every one, so a skip there would hide a broken install step.
 */
export interface SystemProgram {
  /** What the tests call it in their messages ("Chromium"). */
  name: string;
  /** The executable looked for. */
  path: string;
  /** The Debian package that installs it. */
  aptPackage?: string;
  /** How to get it, when no Debian package does ("set DOCKER_HOST to …"); else the apt-get line. */
  install?: string;
  /** The variable that points at another executable, if any. */
  envVar?: string;
}

/** Whether the program is there, as the suite decides: present, missing (skip), or missing in CI (fail). */
export type ProgramVerdict = "present" | "skip" | "fail";

export function verdictOf(program: SystemProgram, env: NodeJS.ProcessEnv = process.env): ProgramVerdict {
  if (existsSync(program.path)) return "present";
  return env.CI === "true" || env.CI === "1" ? "fail" : "skip";
}

/** The one line that says what is missing and how to get it. */
export function missingLine(program: SystemProgram): string {
  const other = program.envVar ? `, or set ${program.envVar} to another executable` : "";
  const how = program.install ?? `install it with apt-get install ${program.aptPackage}${other}`;
  return `${program.name} is not installed (no ${program.path}): ${how}`;
}

/**
 * Registers, in the current describe block (or file), what happens when the program is missing:
 * each test is skipped, after one line on stderr; under CI each test fails with that line. Returns
 * whether the program is present, so a harness can leave its own start-up out.
 */
export function needsProgram(program: SystemProgram): boolean {
  const verdict = verdictOf(program);
  if (verdict === "present") return true;
  const line = missingLine(program);
  if (verdict === "skip") {
    beforeAll(() => {
      process.stderr.write(`skipped: ${line}\n`);
    });
    beforeEach((context) => {
      context.skip();
    });
  } else {
    beforeEach(() => {
      throw new Error(`${line} (CI=true: a test that needs it fails instead of being skipped)`);
    });
  }
  return false;
}
