import { createRequire } from "node:module";

/**
 * testcontainers is an optional peer dependency: loaded here, so a project without it (or with a
 * release that does not run on this Node) learns which one to install instead of a bare
 * "Cannot find module". 12.x declares Node 22.22 and up and fails at import on Node 20 (its
 * undici 8), so the range is 11.x while engines says Node 20.19. testcontainers is CommonJS: it is
 * required, not imported, so this module has no top-level await and a CommonJS project can
 * require() merchant-sandbox/testcontainers (Node 20.19+ require()s ES modules without one).
 */
export function loadTestcontainers(
  load: () => typeof import("testcontainers") = () => createRequire(import.meta.url)("testcontainers"),
): typeof import("testcontainers") {
  try {
    return load();
  } catch (error) {
    const code = (error as { code?: string }).code;
    const missing = code === "MODULE_NOT_FOUND" || code === "ERR_MODULE_NOT_FOUND";
    const why = missing ? "it is not installed" : `it failed to load (${(error as Error).message})`;
    throw new Error(
      `merchant-sandbox/testcontainers needs the testcontainers package, and ${why}: npm install --save-dev testcontainers@^11 (11.x runs on Node 20 and 22; 12.x needs Node 22.22 or later).`,
      { cause: error },
    );
  }
}
