/**
 * The layering rules of src/, checked in CI (`npm run lint:layers`). docs/architecture.md is the map they keep true.
 * @type {import('dependency-cruiser').IConfiguration}
 */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "An import circle makes load order matter and hides which part depends on which; break it by moving the shared piece down a layer.",
      from: {},
      to: { circular: true },
    },
    {
      name: "core-is-the-base",
      severity: "error",
      comment:
        "src/core is the domain: it imports nothing above it (app, endpoints, control, scenarios, adapters, cli, log). The wiring that knows every part lives in src/app.",
      from: { path: "^src/core/" },
      to: { path: "^src/", pathNot: "^src/core/" },
    },
    {
      name: "no-orphans",
      severity: "error",
      comment: "A module nothing imports is dead code or a forgotten entry point.",
      from: { orphan: true, pathNot: ["\\.d\\.ts$", "^src/index\\.ts$", "^src/cli/main\\.ts$", "^src/adapters/msw\\.ts$"] },
      to: {},
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { extensions: [".ts", ".js"] },
  },
};
