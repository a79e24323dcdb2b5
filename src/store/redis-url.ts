/**
 * The state URL (`--state redis://…`) read into what the client needs, and the form it is shown in
 * wherever it is printed: with a password replaced by `***`. A URL that cannot be read is refused
 * with what is wrong and how to write it, quoted by redactUrlText, so a password never reaches a
 * message even when the URL around it is broken or written in another client's form.
 */

export interface RedisTarget {
  readonly host: string;
  readonly port: number;
  readonly db: number;
  readonly username: string | undefined;
  readonly password: string | undefined;
  readonly tls: boolean;
  /** The URL as messages show it: the password, if any, is `***`. */
  readonly shownAs: string;
}

export const DEFAULT_REDIS_PORT = 6379;
const FORM = "redis://[:PASSWORD@]HOST:PORT[/DB] (or rediss:// for TLS)";

export function parseRedisUrl(text: string): RedisTarget {
  if (typeof text !== "string" || text.trim() === "") {
    throw new TypeError(`The state URL is empty: write it as ${FORM}, e.g. redis://127.0.0.1:6379/0.`);
  }
  const quoted = redactUrlText(text);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new TypeError(
      `The state URL ${quoted} is not a URL: write it as ${FORM}; in a password, write / ? # @ and other reserved characters %-escaped (%2F %3F %23 %40).`,
    );
  }
  if (url.protocol !== "redis:" && url.protocol !== "rediss:") {
    throw new TypeError(
      `The state URL ${quoted} is not a redis:// or rediss:// URL (its scheme is ${JSON.stringify(url.protocol)}): write it as ${FORM}.`,
    );
  }
  if (url.hostname === "") {
    throw new TypeError(`The state URL ${quoted} names no host: write it as ${FORM}.`);
  }
  if (url.search !== "" || url.hash !== "") {
    throw new TypeError(
      `The state URL ${quoted} has a ${url.search !== "" ? "query (?…)" : "fragment (#…)"}, which is not read: remove it and write the URL as ${FORM}.`,
    );
  }
  const port = url.port === "" ? DEFAULT_REDIS_PORT : Number(url.port);
  if (port === 0) throw new TypeError(`The state URL ${quoted} has port 0: give the port Redis listens on (${DEFAULT_REDIS_PORT} by default).`);
  const path = url.pathname;
  if (path !== "" && path !== "/" && !/^\/\d{1,9}$/.test(path)) {
    throw new TypeError(`The state URL ${quoted} has a path other than /DB: after the port give nothing or /DB, a database number (/0 by default).`);
  }
  const db = path.length > 1 ? Number(path.slice(1)) : 0;
  const username = url.username === "" ? undefined : decode(url.username, quoted, "user name");
  const password = url.password === "" ? undefined : decode(url.password, quoted, "password");
  if (username !== undefined && password === undefined) {
    // redis://SECRET@host is most often a password written without its colon; as a user name
    // alone it would authenticate as nobody. Neither way is it shown.
    throw new TypeError(
      `The state URL ${quoted} gives a user name and no password, so it would not authenticate: if that is the password, write redis://:PASSWORD@HOST:PORT; for a user, redis://USER:PASSWORD@HOST:PORT.`,
    );
  }
  const scheme = url.protocol.slice(0, -1);
  const auth = password !== undefined ? `${url.username}:***@` : "";
  return {
    host: url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname,
    port,
    db,
    username,
    password,
    tls: scheme === "rediss",
    shownAs: `${scheme}://${auth}${url.hostname}:${port}/${db}`,
  };
}

/**
 * A state URL's text as a message may quote it, whatever its shape, JSON-quoted: the user-info
 * (everything before the authority's last `@`) as `***`; a port that is not a number (a password
 * written with no `@`, as in redis://:PASSWORD) and whatever follows a character no host holds, as
 * `***`; a path other than /DB, and the whole of a query or fragment (redis-py's `?password=`), as
 * `***`; a text with neither a scheme nor an `@` whole, unless it is localhost or an IPv4 address.
 */
export function redactUrlText(text: string): string {
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/{1,2}/.exec(text)?.[0] ?? "";
  // No scheme and no @: a bare password (--state "$REDIS_PASSWORD") as likely as a host, unless it is one.
  if (scheme === "" && !text.includes("@") && !/^(localhost|\d{1,3}(\.\d{1,3}){3})(:\d+)?$/.test(text)) return JSON.stringify("***");
  let rest = text.slice(scheme.length);
  const cut = rest.search(/[?#]/);
  const tail = cut < 0 ? "" : `${rest[cut]}***`;
  if (cut >= 0) rest = rest.slice(0, cut);
  const at = rest.lastIndexOf("@");
  const userInfo = at < 0 ? "" : "***@";
  rest = rest.slice(at + 1);
  const slash = rest.indexOf("/");
  const authority = slash < 0 ? rest : rest.slice(0, slash);
  const path = slash < 0 ? "" : rest.slice(slash);
  return JSON.stringify(`${scheme}${userInfo}${hostShown(authority)}${/^\/\d*$/.test(path) || path === "" ? path : "/***"}${tail}`);
}

/**
 * HOST[:PORT] as shown: from the first character no host name holds on, and a port that is not
 * digits, hidden (an IPv6 address's colons are its own): `redis://host s3cret`, `redis://:s3cret`.
 */
function hostShown(given: string): string {
  const odd = given.search(/[^A-Za-z0-9.\-[\]:%]/);
  if (odd >= 0) return `${given.slice(0, odd)}***`;
  const authority = given;
  const colon = authority.lastIndexOf(":");
  if (colon < 0 || authority.endsWith("]")) return authority;
  const port = authority.slice(colon + 1);
  return /^\d*$/.test(port) ? authority : `${authority.slice(0, colon)}:***`;
}

function decode(part: string, quoted: string, what: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new TypeError(`The state URL ${quoted} has a ${what} with a broken %-escape: write each reserved character as %XX (e.g. %40 for @).`);
  }
}
