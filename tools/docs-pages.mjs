// The generated parts of docs/: what the code already says is written from the code, never by hand.
// `npm run docs` (tools/docs.mjs) writes them; test/unit/docs-generated.test.ts fails when a
// committed page is not what this renders. Reads the built package (dist/), as the CLI runs it.
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import yargs from "yargs";
import { serveCommand } from "../dist/cli/commands/serve.js";
import { envNameOf } from "../dist/cli/env.js";
import { errorReference } from "../dist/cli/error-reference.js";
import { libraryNames, resolveScenario } from "../dist/scenarios/library.js";
import { ruleName, ruleSummary } from "../dist/scenarios/rule-summary.js";
import { scenarioJsonSchema } from "../dist/scenarios/schema.js";

// doctoc (thlorenz/doctoc) writes the tables of contents: CommonJS, its transform has no package export.
const doctocTransform = createRequire(import.meta.url)("doctoc/lib/transform.js");

const root = new URL("..", import.meta.url);

/** The pages this renders (whole, or their generated sections and table of contents), from the repository root: every page of docs/, so a new one gets its table of contents. */
export const GENERATED_PAGES = readdirSync(new URL("docs/", root))
  .filter((name) => name.endsWith(".md"))
  .sort()
  .map((name) => `docs/${name}`);

/**
 * The sections a page must hold, each between `<!-- GENERATED <name> … -->` and
 * `<!-- END GENERATED <name> -->`, and what writes them. A page that lost its markers is an error,
 * not a page quietly left stale.
 */
const SECTIONS = {
  "docs/configuration.md": { "serve-flags": serveFlagsTable },
  "docs/scenarios.md": { "scenario-keys": scenarioKeysTable, "scenario-library": scenarioLibraryTable },
  "docs/performance.md": { "bench-latest": benchLatest, "replica-profile": replicaProfile, "cheap-request": cheapRequest },
  "docs/deployment.md": { "bench-cluster": benchCluster },
};

/** Pages at least this long get a table of contents (doctoc markers required). */
export const TOC_MIN_LINES = 100;

/** Every generated page as it should be committed: `[{ path, content }]`. */
export function renderDocPages() {
  return GENERATED_PAGES.map((path) => ({ path, content: renderPage(path, read(path)) }));
}

function read(path) {
  return readFileSync(new URL(path, root), "utf8");
}

/** One page: the whole of errors.md; elsewhere the generated sections, then the table of contents. */
export function renderPage(path, committed) {
  if (path === "docs/errors.md") return errorReference();
  let page = committed;
  for (const [name, render] of Object.entries(SECTIONS[path] ?? {})) page = replaceSection(path, page, name, render());
  return withToc(path, page);
}

function replaceSection(path, page, name, body) {
  const start = new RegExp(`<!-- GENERATED ${name}\\b[^>]*-->\\n`);
  const end = `<!-- END GENERATED ${name} -->`;
  const from = start.exec(page);
  const to = page.indexOf(end);
  if (!from || to < from.index)
    throw new Error(`${path}: the markers of the generated section '${name}' are missing; put them back (<!-- GENERATED ${name} … --> … ${end})`);
  return page.slice(0, from.index + from[0].length) + body + page.slice(to);
}

function withToc(path, page) {
  const hasMarkers = page.includes("<!-- START doctoc -->");
  if (!hasMarkers) {
    if (page.split("\n").length >= TOC_MIN_LINES)
      throw new Error(
        `${path}: a page of ${TOC_MIN_LINES}+ lines needs a table of contents; add <!-- START doctoc --> and <!-- END doctoc --> under its title`,
      );
    return page;
  }
  // github.com anchors, headings of levels 2 and 3, only those after the markers, compact markers.
  const out = doctocTransform(page, "github.com", 3, 2, 1, "**Contents**", false, "-", false, true, "md", { toc: { pragma: { style: "compact" } } });
  return out.transformed ? out.data : page;
}

const cell = (text) =>
  String(text)
    .replace(/\|/g, "\\|")
    .replace(/\s*\n\s*/g, " ");
const code = (text) => `\`${text}\``;

/** Every flag of `serve`, read from its yargs builder: flag, environment variable, default, description, grouped as --help groups them. */
export function serveFlagsTable() {
  const y = yargs([]);
  serveCommand(undefined).builder(y);
  const options = y.getOptions();
  const descriptions = y.getInternalMethods().getUsageInstance().getDescriptions();
  const groups = y.getGroups();
  const grouped = new Set(Object.values(groups).flat());
  const aliases = new Set(Object.values(options.alias).flat());
  const own = Object.keys(options.key).filter((k) => k !== "help" && k !== "version" && !aliases.has(k));
  const sections = [
    ["Server", own.filter((k) => !grouped.has(k))],
    ...Object.entries(groups).map(([g, keys]) => [g.replace(/:$/, "").replace(/ \(.*\)$/, ""), keys]),
  ];
  const row = (key) => {
    const flag = options.boolean.includes(key) ? `${code(`--${key}`)} / ${code(`--no-${key}`)}` : code(`--${key}`);
    const names = [flag, ...(options.alias[key] ?? []).map((a) => code(`-${a}`))].join(", ");
    const env = code(envNameOf(key));
    // A flag a profile may also set shows its default without yargs filling it in (cli/serve/flags.ts).
    const value = options.default[key] ?? options.defaultDescription[key];
    const shown = value === undefined ? "" : code(Array.isArray(value) ? value.join(",") : value);
    const choices = options.choices[key] ? ` (one of: ${options.choices[key].map((c) => code(c)).join(", ")})` : "";
    return `| ${names} | ${env} | ${shown} | ${cell(descriptions[key] ?? "")}${choices} |`;
  };
  return sections
    .filter(([, keys]) => keys.length > 0)
    .map(([title, keys]) =>
      [`### ${title}`, "", "| flag | environment variable | default | description |", "|---|---|---|---|", ...keys.map(row), ""].join("\n"),
    )
    .join("\n");
}

/** Every object of the scenario format with its required and optional keys, read from the published JSON Schema. */
export function scenarioKeysTable() {
  const rows = [];
  const walk = (schema, path) => {
    if (!schema || typeof schema !== "object") return;
    for (const member of schema.anyOf ?? []) walk(member, path);
    if (schema.type === "array") return walk(schema.items, `${path}[]`);
    if (schema.type !== "object" || !schema.properties) return;
    const required = schema.required ?? [];
    const optional = Object.keys(schema.properties).filter((k) => !required.includes(k) && k !== "$schema");
    rows.push(
      `| ${path ? code(path) : "(the file)"} | ${required.map(code).join(", ") || "(none)"} | ${optional.map(code).join(", ") || "(none)"} |`,
    );
    for (const [key, value] of Object.entries(schema.properties)) walk(value, path ? `${path}.${key}` : key);
  };
  walk(scenarioJsonSchema(), "");
  return ["| object | required keys | optional keys |", "|---|---|---|", ...rows, ""].join("\n");
}

/** The library, from the package's scenarios/ files: name, description and one line per rule, as the QA page lists them. */
export function scenarioLibraryTable() {
  const rows = libraryNames().map((name) => {
    const { scenario } = resolveScenario(name);
    const rules = (scenario.rules ?? []).map((rule, i) => `${code(ruleName(rule, i))}: ${cell(ruleSummary(rule))}`);
    const settings = Object.entries(scenario.settings ?? {}).map(([key, value]) => code(`${key}: ${value}`));
    return `| ${code(scenario.name)} | ${cell(scenario.description)} | ${settings.join(", ") || "(none)"} | ${rules.join("<br>") || "(none)"} |`;
  });
  return ["| scenario | description | settings | rules |", "|---|---|---|---|", ...rows, ""].join("\n");
}

/** The recorded benchmark run, whole, as `npm run bench` wrote it. */
export function benchLatest() {
  return read("bench/results/latest.md");
}

/** The recorded replica profile (where the event loop spends a protected call), whole, as `npm run bench:replica-profile` wrote it. */
export function replicaProfile() {
  return read("bench/results/replica-profile.md");
}

/** Where a cheap request's CPU goes, whole, as `npm run bench:cheap-request` wrote it. */
export function cheapRequest() {
  return read("bench/results/cheap-request.md");
}

/** The recorded cluster bench run (memory store, Redis store, replicas behind haproxy), whole, as `npm run bench:cluster` wrote it. */
export function benchCluster() {
  return read("bench/results/cluster.md");
}
