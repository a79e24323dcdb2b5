import { InvalidRequest, MissingCredentials } from "./errors.js";
import { headerCount, headerValue, type SandboxRequest } from "./http-types.js";
import { TOKEN_QUERY_KEYS } from "./redact.js";

/**
 * Reading `Authorization: Bearer <token>` as RFC 6750 §2.1 defines it. No credentials at all is a
 * bare 401 challenge; anything malformed, or a token in the query string, is 400 invalid_request.
 */

const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*$/;

export interface BearerOptions {
  /** What the endpoint calls the token it wants, for messages ("access token", "merchant payment token"). */
  tokenName: string;
  /** Where to get it, for messages. */
  howToGet: string;
}

export function assertNoTokenInQuery(request: SandboxRequest): void {
  if (!request.query) return;
  for (const pair of request.query.split("&")) {
    const name = decodeName(pair.split("=")[0]!).toLowerCase();
    if (TOKEN_QUERY_KEYS.includes(name)) {
      throw new InvalidRequest(
        "token_in_query",
        `A token was sent in the query string ('${name}='), where it ends up in logs and browser history. Remove it from the URL and send it as 'Authorization: Bearer <token>'.`,
        { challenge: "bearer" },
      );
    }
  }
}

/** The bearer token of the request, or a refusal that says what is wrong with the header. */
export function readBearerToken(request: SandboxRequest, options: BearerOptions): string {
  const count = headerCount(request, "authorization");
  if (count === 0) {
    throw new MissingCredentials(`No credentials were sent. Send the ${options.tokenName} as 'Authorization: Bearer <token>' (${options.howToGet}).`);
  }
  if (count > 1) {
    throw new InvalidRequest(
      "authorization_header_repeated",
      "The Authorization header was sent more than once. Send exactly one 'Authorization: Bearer <token>' header.",
      { challenge: "bearer" },
    );
  }
  const value = headerValue(request, "authorization")!;
  // The token part is optional in the pattern: HTTP parsers strip trailing spaces, so a bare
  // "Bearer" is how an empty token arrives.
  const match = /^([A-Za-z]+)(?: +(.*))?$/.exec(value.trim());
  const scheme = match?.[1] ?? value.trim();
  if (!match || scheme.toLowerCase() !== "bearer") {
    // "Bearer<TAB>token", "Bearer:token": the scheme is right, the separator is not (RFC 7235
    // allows spaces only).
    if (/^bearer[\t:]/i.test(value.trim())) {
      throw new InvalidRequest(
        "authorization_not_bearer",
        `The Authorization header has the Bearer scheme but not a single space after it. Send 'Authorization: Bearer <token>' with the ${options.tokenName}.`,
        { challenge: "bearer" },
      );
    }
    const shown = /^[A-Za-z]{1,20}$/.test(scheme) ? `'${scheme}'` : "no recognisable scheme";
    throw new InvalidRequest(
      "authorization_not_bearer",
      `The Authorization header uses ${shown}, not the Bearer scheme. Send 'Authorization: Bearer <token>' with the ${options.tokenName}.`,
      { challenge: "bearer" },
    );
  }
  const token = (match[2] ?? "").trim();
  if (token === "") {
    throw new InvalidRequest(
      "bearer_token_empty",
      `The Authorization header says Bearer but carries no token. Send 'Authorization: Bearer <token>' with the ${options.tokenName}.`,
      { challenge: "bearer" },
    );
  }
  if (!TOKEN68.test(token)) {
    throw new InvalidRequest(
      "bearer_token_malformed",
      `The bearer token contains characters a token cannot have (spaces, quotes or others outside RFC 6750's token68). Send the ${options.tokenName} exactly as issued, with one space after 'Bearer'.`,
      { challenge: "bearer" },
    );
  }
  return token;
}

/** Query parameter names as the application would read them (`access%5Ftoken` is `access_token`). */
function decodeName(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, " "));
  } catch {
    return raw;
  }
}
