import { echo } from "./echo.js";
import { InvalidRequest, MissingCredentials } from "./errors.js";
import { headerCount, headerValue, type SandboxRequest } from "./http-types.js";
import { TOKEN_QUERY_KEYS } from "./redact.js";

/**
 * Reading `Authorization: Bearer <token>` as RFC 6750 §2.1 defines it. No credentials at all is a
 * bare 401 challenge; anything malformed, or a token in the query string, is 400 invalid_request.
 */

const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*$/;
const ABSENT: BearerHeader = Object.freeze({ kind: "absent" });

export interface BearerOptions {
  /** What the endpoint calls the token it wants, for messages ("access token", "merchant payment token"). */
  tokenName: string;
  /** Where to get it, for messages. */
  howToGet: string;
}

export function assertNoTokenInQuery(request: SandboxRequest): void {
  const found = queryToken(request);
  if (found) {
    throw new InvalidRequest(
      "token_in_query",
      `A token was sent in the query string ('${found.name}='), where it ends up in logs and browser history. Remove it from the URL and send it as 'Authorization: Bearer <token>'.`,
      { challenge: "bearer" },
    );
  }
}

/**
 * The first query parameter named like a token (`access_token`, `token`, `jwt`, `bearer`, in any
 * case or percent-encoding), with its value decoded: what assertNoTokenInQuery refuses, and what
 * attribution reads to learn whose request it was.
 */
export function queryToken(request: SandboxRequest): { name: string; value: string } | undefined {
  if (!request.query) return undefined;
  for (const pair of request.query.split("&")) {
    const eq = pair.indexOf("=");
    const name = decodeName(eq < 0 ? pair : pair.slice(0, eq)).toLowerCase();
    if (TOKEN_QUERY_KEYS.includes(name)) return { name, value: eq < 0 ? "" : decodeName(pair.slice(eq + 1)) };
  }
  return undefined;
}

/**
 * What an Authorization header says about a bearer token: the one reading of the header that the
 * protected endpoints, the attribution of a request to its merchant and the control plane's admin
 * check share, so they can never disagree about which token a request carries.
 *
 * - `absent`: no header;
 * - `token`: the Bearer scheme (any case), spaces, then one credential with no blanks in it;
 *   `token68` says whether it keeps to RFC 6750's alphabet (the API's endpoints insist; an admin
 *   token is whatever the operator chose, so the control plane does not);
 * - `empty`: "Bearer" and nothing after it (HTTP parsers strip trailing spaces, so this is how an
 *   empty token arrives);
 * - `bad_separator`: "Bearer<TAB>token", "Bearer:token" (RFC 7235 allows spaces only);
 * - `not_bearer`: another scheme, or no recognisable one (`scheme` is set only when it is safe to
 *   echo: a word of at most 20 letters, never something that may be the token itself);
 * - `blank_inside`: "Bearer a b", a credential with blanks inside.
 */
export type BearerHeader =
  | { kind: "absent" }
  | { kind: "token"; token: string; token68: boolean }
  | { kind: "empty" }
  | { kind: "bad_separator" }
  | { kind: "not_bearer"; scheme: string | undefined }
  | { kind: "blank_inside" };

export function parseBearerHeader(value: string | undefined): BearerHeader {
  if (value === undefined) return ABSENT;
  // What nearly every request sends, read with one scan of the token: `Bearer `, then token68
  // characters only. Anything else (another case, more spaces, blanks, other characters) takes
  // the full reading below, which gives this case the same answer.
  if (value.startsWith("Bearer ") && TOKEN68.test(value.slice(7))) return { kind: "token", token: value.slice(7), token68: true };
  const trimmed = value.trim();
  const match = /^([A-Za-z]+)(?: +(.*))?$/.exec(trimmed);
  const scheme = match?.[1] ?? trimmed;
  if (!match || scheme.toLowerCase() !== "bearer") {
    if (/^bearer[\t:]/i.test(trimmed)) return { kind: "bad_separator" };
    return { kind: "not_bearer", scheme: /^[A-Za-z]{1,20}$/.test(scheme) ? scheme : undefined };
  }
  const token = (match[2] ?? "").trim();
  if (token === "") return { kind: "empty" };
  if (/\s/.test(token)) return { kind: "blank_inside" };
  return { kind: "token", token, token68: TOKEN68.test(token) };
}

/**
 * The token of the request's `Authorization: Bearer <token>`, or undefined for anything else; never
 * refuses. For reading who a request claims to be (attribution, the journal) and the admin token;
 * an endpoint that needs the token reads it with readBearerToken, which says what is wrong.
 */
export function bearerTokenOf(request: SandboxRequest): string | undefined {
  const parsed = parseBearerHeader(headerValue(request, "authorization"));
  return parsed.kind === "token" ? parsed.token : undefined;
}

/** The bearer token of the request, or a refusal that says what is wrong with the header. */
export function readBearerToken(request: SandboxRequest, options: BearerOptions): string {
  if (headerCount(request, "authorization") > 1) {
    throw new InvalidRequest(
      "authorization_header_repeated",
      "The Authorization header was sent more than once. Send exactly one 'Authorization: Bearer <token>' header.",
      { challenge: "bearer" },
    );
  }
  const parsed = parseBearerHeader(headerValue(request, "authorization"));
  switch (parsed.kind) {
    case "absent":
      throw new MissingCredentials(
        `No credentials were sent. Send the ${options.tokenName} as 'Authorization: Bearer <token>' (${options.howToGet}).`,
      );
    case "bad_separator":
      throw new InvalidRequest(
        "authorization_not_bearer",
        `The Authorization header has the Bearer scheme but not a single space after it. Send 'Authorization: Bearer <token>' with the ${options.tokenName}.`,
        { challenge: "bearer" },
      );
    case "not_bearer":
      throw new InvalidRequest(
        "authorization_not_bearer",
        `The Authorization header uses ${parsed.scheme === undefined ? "no recognisable scheme" : `'${echo(parsed.scheme, 20)}'`}, not the Bearer scheme. Send 'Authorization: Bearer <token>' with the ${options.tokenName}.`,
        { challenge: "bearer" },
      );
    case "empty":
      throw new InvalidRequest(
        "bearer_token_empty",
        `The Authorization header says Bearer but carries no token. Send 'Authorization: Bearer <token>' with the ${options.tokenName}.`,
        { challenge: "bearer" },
      );
    case "blank_inside":
      throw malformed(options);
    case "token":
      if (!parsed.token68) throw malformed(options);
      return parsed.token;
  }
}

function malformed(options: BearerOptions): InvalidRequest {
  return new InvalidRequest(
    "bearer_token_malformed",
    `The bearer token contains characters a token cannot have (spaces, quotes or others outside RFC 6750's token68). Send the ${options.tokenName} exactly as issued, with one space after 'Bearer'.`,
    { challenge: "bearer" },
  );
}

/** Query parameter names and values as the application would read them (`access%5Ftoken` is `access_token`). */
function decodeName(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, " "));
  } catch {
    return raw;
  }
}
