import { InvalidRequest } from "./errors.js";
import { printable } from "./printable.js";

/**
 * Dot segments (RFC 3986 §3.3: a `.` or `..` path segment, each dot also sent percent-encoded as
 * `%2e` in either case). Clients resolve them before sending (RFC 3986 §5.2.4; curl, browsers and
 * fetch all do), so one that arrives was written on purpose, and routing by prefix would take
 * `/api/v2/payment/../cashout/x` for a payment call that a payment-only token may make. They are
 * refused before routing, with the path the client meant: simpler to reason about than a second
 * path that the journal, the rules and the scope check would each have to agree on.
 */

/** A whole segment of one or two dots (literal or %2e): at most six characters tried per position, so linear. */
const DOT_SEGMENT = /(?:^|\/)(?:\.|%2e){1,2}(?=\/|$)/i;

export function hasDotSegment(path: string): boolean {
  return DOT_SEGMENT.test(path);
}

/** RFC 3986 §5.2.4 remove_dot_segments on an absolute path, `%2e` read as a dot: the path the client meant. */
export function withoutDotSegments(path: string): string {
  const out: string[] = [];
  const segments = path.split("/");
  for (let i = 1; i < segments.length; i++) {
    const segment = segments[i]!.replace(/%2e/gi, ".");
    const last = i === segments.length - 1;
    if (segment === "..") {
      if (out.length > 0) out.pop();
      if (last) out.push("");
    } else if (segment === ".") {
      if (last) out.push("");
    } else {
      out.push(segments[i]!);
    }
  }
  return `/${out.join("/")}`;
}

/** The refusal of a path with dot segments; `shownPath` is the redacted path, all an answer may echo. */
export function dotSegmentRefusal(shownPath: string): InvalidRequest {
  return new InvalidRequest(
    "path_dot_segment",
    `The path ${printable(shownPath, 200)} has a '.' or '..' segment (also when sent as %2e), which this sandbox does not resolve. Send the path with its dot segments resolved: ${printable(withoutDotSegments(shownPath), 200)}.`,
  );
}
