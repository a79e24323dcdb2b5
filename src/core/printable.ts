/**
 * Text that came from a request (a path, a header value, a token's claim) and is shown back in a
 * message or header: printable ASCII only, so it can neither start a new line nor break a header,
 * and at most `max` characters.
 */
export function printable(text: string, max: number): string {
  return text.replace(/[^\x20-\x7e]/g, "?").slice(0, max);
}
