import { STATUS_CODES } from "node:http";
import { recordedBody, recordedHeader, recordedParams } from "./har-secrets.js";

/**
 * One exchange as a HAR 1.2 entry (http://www.softwareishard.com/blog/har-12-spec/), its secrets
 * written as pseudonyms unless kept (har-secrets.ts).
 */

export type HeaderMap = Record<string, string | string[]>;

export interface Exchange {
  startedAt: number;
  method: string;
  url: string;
  requestHeaders: HeaderMap;
  requestBody: Buffer;
  status: number;
  answerHeaders: HeaderMap;
  answerBody: Buffer;
}

export function harEntry(x: Exchange, keepSecrets: boolean, nowMs: number): unknown {
  const pairs = (h: HeaderMap) =>
    Object.entries(h).flatMap(([name, v]) =>
      (Array.isArray(v) ? v : [v]).map((value) => ({ name, value: keepSecrets ? value : recordedHeader(name, value) })),
    );
  const first = (h: HeaderMap, name: string) => [h[name] ?? ""].flat()[0] ?? "";
  const text = (b: Buffer, h: HeaderMap) => (keepSecrets ? b.toString("utf8") : recordedBody(b.toString("utf8"), first(h, "content-type")));
  const target = new URL(x.url);
  if (!keepSecrets && target.search !== "") target.search = recordedParams(target.searchParams).toString();
  return {
    startedDateTime: new Date(x.startedAt).toISOString(),
    time: nowMs - x.startedAt,
    request: {
      method: x.method,
      url: target.href,
      httpVersion: "HTTP/1.1",
      headers: pairs(x.requestHeaders),
      queryString: [...target.searchParams].map(([name, value]) => ({ name, value })),
      cookies: [],
      headersSize: -1,
      bodySize: x.requestBody.length,
      ...(x.requestBody.length > 0 && {
        postData: { mimeType: first(x.requestHeaders, "content-type"), text: text(x.requestBody, x.requestHeaders) },
      }),
    },
    response: {
      status: x.status,
      statusText: STATUS_CODES[x.status] ?? "",
      httpVersion: "HTTP/1.1",
      headers: pairs(x.answerHeaders),
      cookies: [],
      content: { size: x.answerBody.length, mimeType: first(x.answerHeaders, "content-type"), text: text(x.answerBody, x.answerHeaders) },
      redirectURL: first(x.answerHeaders, "location"),
      headersSize: -1,
      bodySize: x.answerBody.length,
    },
    cache: {},
    timings: { send: 0, wait: nowMs - x.startedAt, receive: 0 },
  };
}
