import { issueExplainer } from "../core/source/explain-issues.js";
import { allowedKeysAt } from "./allowed-keys.js";

/** What each enum field of a scenario is called in messages: "'tokn' is not an endpoint". */
const VALUE_NOUNS: Record<string, string> = {
  endpoint: "an endpoint",
  method: "an HTTP method",
  algorithm: "a supported algorithm",
  credential_precedence: "a credential precedence",
  login_mode: "a login mode",
  login_token: "a login token mode",
  scopes: "a scope",
  revoke_token: "a revoke_token target",
  expire_token: "an expire_token target",
};

/** The schema's complaints about a scenario file in the loader's words (core/source/explain-issues.ts). */
export const explain = issueExplainer({ allowedKeysAt, valueNouns: VALUE_NOUNS });
