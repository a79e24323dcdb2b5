import { isAbsolute, resolve } from "node:path";
import { CATALOGUE_CODES } from "../core/error-catalogue.js";
import { RESERVED_CLAIMS } from "../core/token-format.js";
import { allowedKeysIn } from "../core/source/allowed-keys.js";
import { clip, pathText, type Explained, type Path } from "../core/source/data-problems.js";
import { issueExplainer, valueAt } from "../core/source/explain-issues.js";
import { didYouMean } from "../core/source/suggest.js";
import { parseYamlSource, readSourceText, type PositionOf } from "../core/source/yaml-source.js";
import { validateData } from "../core/source/validate-data.js";
import { BUILT_IN_NAMES, BUILT_IN_PROFILES } from "./builtins.js";
import { PLACEHOLDERS, type ProfilePart } from "./placeholders.js";
import { ProfileLoadError } from "./problems.js";
import { profileSchema, type ProfileFile } from "./schema.js";
import { placeholdersIn } from "./template.js";
import { isTimeFormat, TIME_FORMATS } from "./time-value.js";
import { counterFormatProblem } from "./count-value.js";
import { companionShapeProblem } from "./companion-token.js";

/**
 * Reading a profile (a built-in name, a YAML or JSON file, or an object) into a validated
 * ProfileFile, with the scenario loader's machinery (core/source/): every problem with file, line
 * and column, what is wrong and how to fix it, and a did-you-mean; a profile with any problem
 * yields nothing (nothing half-loads).
 */

export { ProfileLoadError } from "./problems.js";
export { BUILT_IN_NAMES } from "./builtins.js";
export { didYouMean } from "../core/source/suggest.js";

/** A profile as createSandbox, a scenario or a session names it. */
export type ProfileInput = string | ProfileFile;

/**
 * A built-in name (`lexik`), a file path (relative to `baseDir`, default the working directory),
 * or a profile object. `where` says who asked, for messages ("--profile", "scenario 'x'").
 */
export function resolveProfile(input: ProfileInput, where: string, baseDir?: string): ProfileFile {
  if (typeof input !== "string") return validateProfile(input, `${where} (a profile object)`);
  const builtIn = BUILT_IN_PROFILES[input];
  if (builtIn && Object.hasOwn(BUILT_IN_PROFILES, input)) return builtIn;
  if (!looksLikePath(input)) {
    throw new ProfileLoadError(
      [],
      `${where}: '${clip(input)}' is not a built-in profile${didYouMean(input, BUILT_IN_NAMES)} (built-in: ${BUILT_IN_NAMES.join(", ")}); or give the path of a profile file (.yaml, .yml or .json)`,
    );
  }
  return loadProfileFile(baseDir === undefined || isAbsolute(input) ? input : resolve(baseDir, input));
}

/** Only built-in names: what a caller of the control plane may pick (it must not read the server's files). */
export function isBuiltInProfile(name: string): boolean {
  return Object.hasOwn(BUILT_IN_PROFILES, name);
}

function looksLikePath(text: string): boolean {
  return /[/\\]/.test(text) || /\.(ya?ml|json)$/i.test(text);
}

export function loadProfileFile(path: string): ProfileFile {
  const read = readSourceText(path, "the profile file");
  if (!read.ok) throw new ProfileLoadError(read.problems);
  return parseProfileText(read.text, path);
}

export function parseProfileText(text: string, file = "<profile>"): ProfileFile {
  const parsed = parseYamlSource(text, file, "a profile's keys are names such as token or body");
  if (!parsed.ok) throw new ProfileLoadError(parsed.problems);
  return validateProfile(parsed.data, file, parsed.positionOf);
}

const explain = issueExplainer({
  allowedKeysAt: (path) => allowedKeysIn(profileSchema, path),
  valueNouns: { alg: "a supported algorithm", wwwAuthenticate: "keep or omit" },
});

/** Validates a profile given as data (a parsed file, or an object passed to createSandbox). */
export function validateProfile(data: unknown, file: string, positionOf: PositionOf = () => ({ line: 1, column: 1 })): ProfileFile {
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    throw new ProfileLoadError([{ file, line: 1, column: 1, path: "", message: "a profile holds one mapping with name and the answers it shapes" }]);
  }
  const checked = validateData(profileSchema, data, file, positionOf, explain, semanticProblems);
  if (checked.ok) return checked.value;
  throw new ProfileLoadError(checked.problems);
}

/** The template parts of a profile and the placeholders each may use. */
const ANSWER_PARTS = ["token", "login", "paymentInit", "protected"] as const;
const REFUSAL_GROUPS = ["token", "protected", "paymentInit", "login"] as const;
/** The keys of an answer or a refusal layer that hold templates. */
const TEMPLATE_KEYS = ["body", "text", "headers", "message", "wwwAuthenticate"] as const;

/** Every template of a profile, where it stands, and the part whose placeholders it may use (the renderer reads the same list). */
export function templatesOf(data: Record<string, unknown>): Array<[Path, unknown, ProfilePart]> {
  const found: Array<[Path, unknown, ProfilePart]> = [[["headers"], data.headers, "headers"]];
  const layer = (path: Path, part: ProfilePart) => {
    for (const key of TEMPLATE_KEYS) found.push([[...path, key], valueAt(data, [...path, key]), part]);
  };
  for (const part of ANSWER_PARTS) layer([part], part);
  layer(["refusal"], "refusal");
  for (const group of REFUSAL_GROUPS) layer(["refusal", "groups", group], "refusal");
  const codes = data.codes;
  if (codes !== null && typeof codes === "object" && !Array.isArray(codes)) for (const code of Object.keys(codes)) layer(["codes", code], "refusal");
  return found;
}

/**
 * jwt.claims may add claims, never set one the sandbox writes and reads itself (times, revocation,
 * issuer, audience, client, scopes) or the merchant claim: a token must still say whose it is and
 * when it expires.
 */
function reservedClaimProblems(data: Record<string, unknown>): Explained[] {
  const claims = valueAt(data, ["jwt", "claims"]);
  if (claims === null || typeof claims !== "object" || Array.isArray(claims)) return [];
  const merchantClaim = valueAt(data, ["jwt", "merchantClaim"]);
  const own = typeof merchantClaim === "string" ? merchantClaim : "sub";
  // The client and scope claims under the names the profile gives them are the sandbox's too.
  const named = [valueAt(data, ["jwt", "clientClaim"]), valueAt(data, ["jwt", "scopeClaim"])].filter(
    (v): v is string => typeof v === "string" && v !== "none",
  );
  const problems: Explained[] = [];
  for (const name of Object.keys(claims)) {
    const reserved = name === own || (RESERVED_CLAIMS as readonly string[]).includes(name) || named.includes(name);
    if (!reserved) continue;
    const instead =
      name === own
        ? "it is the merchant claim (jwt.merchantClaim), which the sandbox fills with the merchant id or login e-mail (jwt.merchantValue)"
        : name === "iss" || name === "aud"
          ? `the sandbox writes it from jwt.${name === "iss" ? "issuer" : "audience"} (or leaves it out with none)`
          : name === "iat" || name === "exp" || name === "nbf"
            ? "the sandbox writes the token's times (jwt.ttl sets its lifetime)"
            : "the sandbox writes and reads it itself";
    problems.push({
      path: ["jwt", "claims"],
      key: name,
      message: `jwt.claims may not set '${clip(name)}': ${instead}; reserved: ${[...RESERVED_CLAIMS, own === "sub" ? undefined : own].filter(Boolean).join(", ")}. Remove it from claims`,
    });
  }
  return problems;
}

/** What the schema cannot say: placeholders each part knows, formats only on times, codes the catalogue has. */
function semanticProblems(data: Record<string, unknown>): Explained[] {
  const problems: Explained[] = [];
  const codes = data.codes;
  if (codes !== null && typeof codes === "object" && !Array.isArray(codes)) {
    for (const code of Object.keys(codes)) {
      if (!(CATALOGUE_CODES as readonly string[]).includes(code)) {
        problems.push({
          path: ["codes"],
          key: code,
          message: `'${clip(code)}' is not a code of the sandbox${didYouMean(code, CATALOGUE_CODES)} (\`merchant-sandbox errors\` lists them)`,
        });
      }
    }
  }
  problems.push(...reservedClaimProblems(data));
  for (const [path, template, part] of templatesOf(data)) {
    if (template === undefined) continue;
    const types = PLACEHOLDERS[part];
    const known = Object.keys(types);
    for (const found of placeholdersIn(template, path)) {
      const type = types[found.name];
      if (type === undefined) {
        problems.push({
          path: found.path,
          message: `unknown placeholder '{{${clip(found.name)}}}'${didYouMean(found.name, known)} (${pathText(path)} may use: ${known.join(", ")})`,
        });
      } else if (type === "companion") {
        const problem = companionShapeProblem(found.name, found.format);
        if (problem) problems.push({ path: found.path, message: problem });
      } else if (type === "counter") {
        const problem = counterFormatProblem(found.name as "count_down" | "count_up", found.format);
        if (problem) problems.push({ path: found.path, message: problem });
      } else if (found.format !== undefined && !type.startsWith("time")) {
        problems.push({
          path: found.path,
          message: `'{{${found.name}:${clip(found.format)}}}': only a time or a count takes a format, and ${found.name} is not one; write {{${found.name}}}`,
        });
      } else if (found.format !== undefined && !isTimeFormat(found.format)) {
        problems.push({
          path: found.path,
          message: `'{{${found.name}:${clip(found.format)}}}': unknown time format${didYouMean(found.format, TIME_FORMATS)} (one of: ${TIME_FORMATS.join(", ")})`,
        });
      }
    }
  }
  return problems;
}
