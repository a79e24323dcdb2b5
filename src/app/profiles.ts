import { dirname } from "node:path";
import type { ChosenProfile, ProfileChooser } from "../core/answer-shaper.js";
import { echo } from "../core/echo.js";
import type { SettingsInput } from "../core/config.js";
import { DEFAULT_TOKEN_FORMAT, type TokenFormat } from "../core/token-format.js";
import type { ProfileFile } from "../profiles/schema.js";

/**
 * Which response profile each scenario answers in: a session's choice, else the scenario file's
 * settings.profile, else the sandbox's (createSandbox({ profile }), `serve --profile`). The profile
 * loader (YAML parser, zod) is imported only when some profile is named: a sandbox that names none
 * answers in `oauth`, today's shapes, and starts as before.
 */

export type ProfileOption = string | ProfileFile;

/** The sandbox's own profile, read at start, with what its jwt section sets sandbox-wide. */
export interface SandboxProfile {
  chosen: ChosenProfile | undefined;
  /** jwt.alg, ttl, leeway, issuer and audience as settings (explicit options override them). */
  settings: SettingsInput;
  /** How its tokens are written, for the token service (the tokens of merchants of no scenario). */
  tokenFormat: TokenFormat;
}

type Loader = typeof import("../profiles/load.js") & typeof import("../profiles/shaper.js");

async function loader(): Promise<Loader> {
  return { ...(await import("../profiles/load.js")), ...(await import("../profiles/shaper.js")) };
}

/** Reads the sandbox's profile (throws ProfileLoadError, with the located problem, when it cannot be used). */
export async function sandboxProfile(option: ProfileOption | undefined): Promise<{ file: ProfileFile | undefined; profile: SandboxProfile }> {
  if (option === undefined) return { file: undefined, profile: { chosen: undefined, settings: {}, tokenFormat: DEFAULT_TOKEN_FORMAT } };
  const load = await loader();
  const file = load.resolveProfile(option, "profile");
  const tokenFormat = tokenFormatOf(file);
  // Its settings are the sandbox's already (the base every scenario starts from).
  return {
    file,
    profile: { chosen: { name: file.name, shaper: load.createShaper(file), settings: {}, tokenFormat }, settings: jwtSettings(file), tokenFormat },
  };
}

/** A jwt section's alg, ttl, leeway, issuer and audience as settings (`none` is no claim: tokenFormatOf). */
function jwtSettings(file: ProfileFile): SettingsInput & ChosenProfile["settings"] {
  const jwt = file.jwt ?? {};
  return {
    ...(jwt.alg !== undefined && { algorithm: jwt.alg }),
    ...(jwt.ttl !== undefined && { tokenTtl: jwt.ttl }),
    ...(jwt.leeway !== undefined && { leeway: jwt.leeway }),
    ...(jwt.issuer !== undefined && jwt.issuer !== "none" && { issuer: jwt.issuer }),
    ...(jwt.audience !== undefined && jwt.audience !== "none" && { audience: jwt.audience }),
  };
}

/** How a profile's tokens are written: one frozen object per profile, shared by its scenarios. */
function tokenFormatOf(file: ProfileFile): TokenFormat {
  const jwt = file.jwt;
  if (jwt === undefined) return DEFAULT_TOKEN_FORMAT;
  return Object.freeze({
    typ: jwt.typ === "none" ? undefined : (jwt.typ ?? DEFAULT_TOKEN_FORMAT.typ),
    kid: jwt.kid ?? true,
    merchantClaim: jwt.merchantClaim ?? DEFAULT_TOKEN_FORMAT.merchantClaim,
    merchantValue: jwt.merchantValue ?? DEFAULT_TOKEN_FORMAT.merchantValue,
    iss: jwt.issuer !== "none",
    aud: jwt.audience !== "none",
    claims: jwt.claims === undefined ? undefined : Object.freeze(structuredClone(jwt.claims)),
    clientClaim: jwt.clientClaim === "none" ? undefined : (jwt.clientClaim ?? DEFAULT_TOKEN_FORMAT.clientClaim),
    scopeClaim: jwt.scopeClaim === "none" ? undefined : (jwt.scopeClaim ?? DEFAULT_TOKEN_FORMAT.scopeClaim),
    ...(jwt.headerOrder !== undefined && { headerOrder: Object.freeze([...jwt.headerOrder]) }),
  });
}

/**
 * The chooser the scenario registry calls for every scenario it builds. Profiles are read once per
 * sandbox and kept by name (built-ins) or path, so sessions that pick one do not read it again.
 */
export function profileChooser(sandbox: { file: ProfileFile | undefined; profile: SandboxProfile }): ProfileChooser {
  const chosen = new Map<string, ChosenProfile>();
  if (sandbox.file && sandbox.profile.chosen) chosen.set(sandbox.file.name, sandbox.profile.chosen);
  const choose = (load: Loader, file: ProfileFile): ChosenProfile => {
    return { name: file.name, shaper: load.createShaper(file), settings: jwtSettings(file), tokenFormat: tokenFormatOf(file) };
  };
  return async (scenario, source, requested) => {
    if (requested !== undefined) {
      const known = chosen.get(requested);
      if (known) return known;
      const load = await loader();
      // A caller of the control plane picks a built-in or a profile this sandbox already loaded,
      // never a path: it must not make the server read its files.
      if (!load.isBuiltInProfile(requested)) {
        const names = [...new Set([...load.BUILT_IN_NAMES, ...chosen.keys()])];
        throw new load.ProfileLoadError(
          [],
          `"profile": '${echo(requested, 80)}' is not a profile of this sandbox${load.didYouMean(requested, names)}; use one of: ${names.join(", ")}`,
        );
      }
      const picked = choose(load, load.resolveProfile(requested, '"profile"'));
      chosen.set(requested, picked);
      return picked;
    }
    const named = scenario.settings?.profile;
    if (named === undefined) return sandbox.profile.chosen ?? OAUTH;
    const known = chosen.get(named);
    if (known) return known;
    const load = await loader();
    const base = source.startsWith("/") ? dirname(source) : undefined;
    const file = load.resolveProfile(named, `scenario '${scenario.name}' settings.profile`, base);
    const picked = choose(load, file);
    chosen.set(named, picked);
    // Sessions may then pick it by its name too.
    if (!chosen.has(file.name)) chosen.set(file.name, picked);
    return picked;
  };
}

const OAUTH: ChosenProfile = { name: "oauth", shaper: undefined, settings: {} };
