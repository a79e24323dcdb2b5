// The msw adapter's types for CommonJS TypeScript projects: dist/adapters/msw.d.cts, a copy of
// msw.d.ts that package.json's "require" condition of "./msw" points to. msw ships two sets of
// types (index.d.mts for import, index.d.ts for require); our ESM msw.d.ts resolves "msw" as an
// import, a CommonJS project's own `import { setupServer } from "msw/node"` as a require, and the
// two RequestHandler classes do not match: `setupServer(...createMswHandlers(…))` failed to
// type-check there. The same declarations read as CommonJS resolve "msw" as the project does. At
// run time both load dist/adapters/msw.js: Node 20.19+ (engines) require()s ES modules.
//
//   node tools/cjs-types.mjs        after tsc, as part of `npm run build`
import { copyFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const DIST = fileURLToPath(new URL("../dist/", import.meta.url));
copyFileSync(`${DIST}adapters/msw.d.ts`, `${DIST}adapters/msw.d.cts`);
