import { z } from "zod";

/**
 * The header names and values a source file may script on an answer (a scenario's
 * `respond.headers`, a profile's `headers`), one definition for both formats. The server frames
 * every answer itself (Content-Length from the body) and owns its connection, so a framing or
 * hop-by-hop header from a file would send two framings, or a Content-Length that disagrees with the
 * body (RFC 9112 §6.3: a client then reads a wrong body or none, or drops the connection).
 */

/** The names refused, lower-case, with why each belongs to the server and not to the answer. */
const RESERVED_HEADERS: ReadonlyMap<string, string> = new Map([
  ["content-length", "the server sets it from the body"],
  ["transfer-encoding", "the server frames every answer with Content-Length"],
  ["trailer", "the server sends no trailers"],
  ["connection", "a hop-by-hop header: the server manages its connections"],
  ["keep-alive", "a hop-by-hop header: the server manages its connections"],
  ["proxy-connection", "a hop-by-hop header: the server manages its connections"],
  ["te", "a hop-by-hop header of requests"],
  ["upgrade", "a hop-by-hop header: the server switches no protocol"],
]);

/** Why a scripted answer may not set this header, or undefined when it may. */
export function reservedHeaderReason(name: string): string | undefined {
  const why = RESERVED_HEADERS.get(name.toLowerCase());
  return why === undefined ? undefined : `'${name}' cannot be scripted: ${why}. Remove it from the headers`;
}

/** The reserved names as one JSON Schema pattern, any case (JSON Schema's regexes take no flags). */
const RESERVED_PATTERN = `^(?:${[...RESERVED_HEADERS.keys()].map((name) => name.replace(/[a-z]/g, (c) => `[${c}${c.toUpperCase()}]`)).join("|")})$`;

export const scriptedHeaderName = z
  .string()
  .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, { message: "must be a valid HTTP header name" })
  .superRefine((name, ctx) => {
    const reason = reservedHeaderReason(name);
    if (reason !== undefined) ctx.addIssue({ code: "custom", message: reason });
  })
  // The published JSON Schema refuses them too, so an editor flags them as the loader does.
  .meta({ not: { pattern: RESERVED_PATTERN } });

export const scriptedHeaderValue = z.string().regex(/^[\x20-\x7e\t]*$/, { message: "must be printable ASCII on one line (no CR or LF)" });

/** Fixed extra headers of a scripted answer, by name. */
export const scriptedHeaders = z.record(scriptedHeaderName, scriptedHeaderValue);
