import type { Socket } from "node:net";
import { ExpectationFailed, HeadersTooLarge, InvalidRequest, RequestTimeout, TooManyHeaders, type SandboxError } from "../core/errors.js";
import type { SandboxResponse } from "../core/http-types.js";
import { echo } from "../core/echo.js";
import { statusTitle } from "../core/problem.js";

/**
 * Refusals made by the HTTP server itself, before the sandbox sees a request: node's parser
 * errors, a missing Host, an Expect the server does not meet. Each is a problem+json that says what
 * to fix, on a connection that is then closed. None is journaled: the request never reached the
 * sandbox, so nothing it holds changes.
 */

/** What a request refused by node's HTTP parser was refused for. */
export function refusalOfParserError(code: string | undefined, maxHeaderBytes: number): SandboxError {
  if (code === "ERR_HTTP_REQUEST_TIMEOUT") {
    return new RequestTimeout("The request was not completed in time. Send the headers and body without pausing.");
  }
  if (code === "HPE_HEADER_OVERFLOW") {
    return new HeadersTooLarge(
      `The request's headers are larger than this sandbox accepts (${maxHeaderBytes} bytes in all). Send shorter headers: an access token is under 2 KB, so an oversized Authorization or Cookie header is the usual cause (the limit is serve --max-header-bytes).`,
    );
  }
  return new InvalidRequest(
    "http_malformed",
    "The request is not valid HTTP/1.1 (bad request line, header or framing). Check the client's request encoding.",
  );
}

/**
 * More header fields than the limit. Past node's own count limit the extra fields were dropped
 * without a word, and a second Authorization among them went unseen: the server counts them instead.
 */
export function tooManyHeaders(maxHeaders: number): SandboxError {
  return new TooManyHeaders(
    `The request has more than ${maxHeaders} header fields, the most this sandbox accepts. Send only the headers the request needs (the limit is serve --max-headers).`,
  );
}

/** RFC 9112 §3.2: an HTTP/1.1 request must name its host. */
export function hostMissing(): SandboxError {
  return new InvalidRequest(
    "host_missing",
    "An HTTP/1.1 request must carry a Host header (RFC 9112 §3.2). Send 'Host: <host>:<port>' as every HTTP client does.",
  );
}

/** An Expect other than 100-continue, which is the only expectation this server meets. */
export function expectationUnsupported(value: string | undefined): SandboxError {
  return new ExpectationFailed(
    `This sandbox meets only 'Expect: 100-continue', not '${echo(value ?? "", 80)}'. Remove the Expect header or send 100-continue.`,
  );
}

/** Writes a whole HTTP/1.1 answer on a raw socket, then closes it (for answers node leaves to us). */
export function endSocketWith(socket: Socket, response: SandboxResponse): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  let head = `HTTP/1.1 ${response.status} ${statusTitle(response.status)}\r\n`;
  for (const name in response.headers) head += `${name}: ${response.headers[name]}\r\n`;
  head += `content-length: ${Buffer.byteLength(response.body)}\r\nconnection: close\r\n\r\n`;
  socket.end(head + response.body);
}
