import type { AppContext, FrameworkApp, FrameworkOptions, RawAnswer } from "./framework-kit.js";
import { startFrameworkProvider } from "./framework-kit.js";
import { GO_CREDENTIALS, goApp } from "./go-service.js";
import type { RunningProvider } from "./kit.js";

/**
 * The Go service (go-service.ts) behind an nginx gateway, as a provider may put one in front:
 * - nginx's own error page for a protected route reached without Authorization (the gateway's
 *   `auth_request`-style check answers before the service), copied from nginx/nginx
 *   src/http/ngx_http_special_response.c (1.25+): ngx_http_error_401_page and ngx_http_error_tail,
 *   CRLF line ends, `Content-Type: text/html`;
 * - a rate limiter's counting headers on every answer, in the names Kong's rate-limiting plugin uses
 *   for a per-minute limit (`X-RateLimit-Limit-Minute`, `X-RateLimit-Remaining-Minute`): the limit, and
 *   what is left, one less per request, starting again at the limit once used up (the window here
 *   is the request count, so runs stay deterministic).
 * Drift: status: the gateway answers its page for no Authorization with 403 (`error_page 401 =403`).
 */
export const GATEWAY_DRIFTS = ["status"] as const;

const LIMIT = 60;
const CRLF = "\r\n";
const TAIL = `<hr><center>nginx</center>${CRLF}</body>${CRLF}</html>${CRLF}`;

function nginxPage(status: number, reason: string): RawAnswer {
  return {
    status,
    headers: { "Content-Type": "text/html" },
    body: `<html>${CRLF}<head><title>${status} ${reason}</title></head>${CRLF}<body>${CRLF}<center><h1>${status} ${reason}</h1></center>${CRLF}${TAIL}`,
  };
}

export function startGatewayProvider(options?: FrameworkOptions): Promise<RunningProvider> {
  return startFrameworkProvider(gatewayApp, GO_CREDENTIALS, options);
}

async function gatewayApp(ctx: AppContext): Promise<FrameworkApp> {
  const service = await goApp({ ...ctx, drift: undefined });
  let used = 0;
  const counted = (answer: RawAnswer): RawAnswer => {
    const remaining = LIMIT - 1 - (used++ % LIMIT);
    return {
      ...answer,
      headers: { ...answer.headers, "X-RateLimit-Limit-Minute": String(LIMIT), "X-RateLimit-Remaining-Minute": String(remaining) },
    };
  };
  return {
    expiredToken: () => service.expiredToken(),
    async handle(req) {
      const protectedRoute = /^\/api\/v2\/(payment|cashout)\//.test(req.path) && req.path !== "/api/v2/payment/init";
      if (protectedRoute && req.headers.authorization === undefined)
        return counted({ ...nginxPage(401, "Authorization Required"), ...(ctx.drift === "status" && { status: 403 }) });
      return counted(await service.handle(req));
    },
  };
}
