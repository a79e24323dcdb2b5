import { describe, expect, it } from "vitest";
import { missingLine, type SystemProgram, verdictOf } from "../support/system-program.js";

const missing: SystemProgram = { name: "Redis", path: "/nonexistent/redis-server", aptPackage: "redis-server" };
const present: SystemProgram = { name: "Node", path: process.execPath, aptPackage: "nodejs" };

describe("a test that needs a system program", () => {
  it("runs when the program is there, CI or not", () => {
    expect(verdictOf(present, {})).toBe("present");
    expect(verdictOf(present, { CI: "true" })).toBe("present");
  });

  it("is skipped when it is missing on a machine with only Node", () => {
    expect(verdictOf(missing, {})).toBe("skip");
    expect(verdictOf(missing, { CI: "false" })).toBe("skip");
  });

  it("fails when it is missing under CI=true, where .ci/run should have installed it", () => {
    expect(verdictOf(missing, { CI: "true" })).toBe("fail");
    expect(verdictOf(missing, { CI: "1" })).toBe("fail");
  });

  it("says in one line what is missing and the apt package that brings it", () => {
    expect(missingLine(missing)).toBe("Redis is not installed (no /nonexistent/redis-server): install it with apt-get install redis-server");
    expect(missingLine({ ...missing, envVar: "REDIS_SERVER" })).toBe(
      "Redis is not installed (no /nonexistent/redis-server): install it with apt-get install redis-server, or set REDIS_SERVER to another executable",
    );
  });

  it("says how to get a program no Debian package brings", () => {
    const engine: SystemProgram = { name: "A container engine", path: "/nonexistent/image-check", install: "set DOCKER_HOST to a Docker engine" };
    expect(missingLine(engine)).toBe("A container engine is not installed (no /nonexistent/image-check): set DOCKER_HOST to a Docker engine");
  });
});
