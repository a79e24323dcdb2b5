/**
 * The page's two addresses, in the location hash so the server needs to know of one file only:
 * `#/` (home) and `#/sessions/<id>`. Pure, for the unit tests.
 */
export type Route = { name: "home" } | { name: "session"; id: string };

/**
 * The route a hash names, or undefined for a hash that is not a route (such as `#row-req_12`, an
 * in-page link): the page then stays where it is.
 */
export function parseRoute(hash: string): Route | undefined {
  if (hash === "" || hash === "#" || hash === "#/") return { name: "home" };
  const m = /^#\/sessions\/([^/?#]+)\/?$/.exec(hash);
  if (m) {
    try {
      return { name: "session", id: decodeURIComponent(m[1]!) };
    } catch {
      return { name: "home" };
    }
  }
  return hash.startsWith("#/") ? { name: "home" } : undefined;
}

export function sessionHref(id: string): string {
  return `#/sessions/${encodeURIComponent(id)}`;
}
