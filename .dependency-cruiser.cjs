/**
 * The layering rules of src/, checked in CI (`npm run lint:layers`). docs/architecture.md is the map they keep true:
 * core <- scenarios, endpoints, profiles, store; scenarios, endpoints <- control <- app <- adapters, log, cli.
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
      name: "endpoints-see-only-core",
      severity: "error",
      comment: "A merchant API endpoint works from the EndpointContext and core's domain; the pipeline (src/app) hands it everything else.",
      from: { path: "^src/endpoints/" },
      to: { path: "^src/", pathNot: "^src/(core|endpoints)/" },
    },
    {
      name: "scenarios-see-only-core",
      severity: "error",
      comment: "Scenarios (files, rules, actions) build on the domain only; the pipeline in src/app runs them.",
      from: { path: "^src/scenarios/" },
      to: { path: "^src/", pathNot: "^src/(core|scenarios)/" },
    },
    {
      name: "profiles-see-only-core",
      comment:
        "Response profiles (schema, loader, templates, renderer) build on the domain only; src/app picks a scenario's profile and hands the endpoints its renderer.",
      severity: "error",
      from: { path: "^src/profiles/" },
      to: { path: "^src/", pathNot: "^src/(core|profiles)/" },
    },
    {
      name: "store-sees-only-core",
      severity: "error",
      comment:
        "The state stores (memory, Redis) keep what the replicas share behind core's StateStore; src/app picks one and hands it to the sandbox.",
      from: { path: "^src/store/" },
      to: { path: "^src/", pathNot: "^src/(core|store)/" },
    },
    {
      name: "control-is-below-app",
      severity: "error",
      comment: "The control plane uses core, scenarios and endpoints; only src/app wires it in, and the adapters and CLI sit above both.",
      from: { path: "^src/control/" },
      to: { path: "^src/(app|adapters|cli|log)/" },
    },
    {
      name: "app-is-below-the-edges",
      severity: "error",
      comment: "src/app builds the sandbox; adapters, the CLI and the log formats use it, never the other way round.",
      from: { path: "^src/(app|core|endpoints|scenarios|profiles|control)/" },
      to: { path: "^src/(adapters|cli|log)/" },
    },
    {
      name: "no-orphans",
      severity: "error",
      comment: "A module nothing imports is dead code or a forgotten entry point.",
      from: {
        orphan: true,
        pathNot: ["\\.d\\.ts$", "^src/index\\.ts$", "^src/cli/main\\.ts$", "^src/adapters/msw\\.ts$", "^src/adapters/express\\.ts$"],
      },
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
