/**
 * The state URL (`--state redis://…`) read into what the client needs, and the form it is shown in
 * wherever it is printed: with a password replaced by `***`. A URL that cannot be read is refused
 * with what is wrong and how to write it, quoting it with everything before its last `@` hidden,
 * so a password never reaches a message even when the URL around it is broken.
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
    throw new TypeError(
      `The state URL ${quoted} ends in ${JSON.stringify(path)}: after the port give nothing or /DB, a database number (/0 by default).`,
    );
  }
  const db = path.length > 1 ? Number(path.slice(1)) : 0;
  const username = url.username === "" ? undefined : decode(url.username, quoted, "user name");
  const password = url.password === "" ? undefined : decode(url.password, quoted, "password");
  const scheme = url.protocol.slice(0, -1);
  const auth = password !== undefined ? `${url.username}:***@` : username !== undefined ? `${url.username}@` : "";
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

/** A URL's text with whatever stands between `//` (or the start) and its last `@` replaced by `***`. */
export function redactUrlText(text: string): string {
  const at = text.lastIndexOf("@");
  if (at < 0) return JSON.stringify(text);
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.exec(text)?.[0] ?? "";
  return JSON.stringify(`${scheme}***${text.slice(at)}`);
}

function decode(part: string, quoted: string, what: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new TypeError(`The state URL ${quoted} has a ${what} with a broken %-escape: write each reserved character as %XX (e.g. %40 for @).`);
  }
}
