import type { ShapedSchemas } from "../../core/answer-shaper.js";

/**
 * The merchant API's paths as the active response profile answers them: the token, payment/init
 * and login successes and every problem+json refusal get the profile's media type and a schema
 * derived from its templates (constants as `const`, placeholders by their type), and the
 * WWW-Authenticate headers go when the profile omits them. The control plane is never shaped.
 */
export function shapeMerchantPaths(paths: Record<string, object>, shapes: ShapedSchemas, profile: string): Record<string, object> {
  const shaped = structuredClone(paths) as Record<string, Record<string, { responses?: Record<string, Response> }>>;
  const success = (path: string, shape: ShapedSchemas["token"], defaultStatus: string) => {
    const responses = shaped[path]?.post?.responses;
    const today = responses?.[defaultStatus];
    if (!responses || !today || !shape) return;
    delete responses[defaultStatus];
    responses[String(shape.status)] = {
      ...today,
      description: `${today.description} In the '${profile}' response profile's shape.`,
      content: { [shape.contentType]: { schema: shape.schema } },
    };
  };
  success("/api/v2/auth/token", shapes.token, "200");
  success("/api/v2/payment/init", shapes.paymentInit, "201");
  success("/api/login_check", shapes.login, "200");
  // The login's refused credentials are Lexik's own body by default; a profile answers them as its
  // other refusals (login_invalid_credentials).
  const loginRefused = shaped["/api/login_check"]?.post?.responses?.["401"];
  if (loginRefused && shapes.refusal) {
    loginRefused.description = `${loginRefused.description.replace(/: Lexik's own body, not problem\+json\.$/, ".")} In the '${profile}' response profile's shape (code login_invalid_credentials).`;
    loginRefused.content = { [shapes.refusal.contentType]: { schema: shapes.refusal.schema } };
  }
  for (const operations of Object.values(shaped)) {
    for (const operation of Object.values(operations)) {
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        // `default` is what a scenario rule scripts: the rule's answer, not the profile's.
        if (status === "default" || !response.content?.["application/problem+json"]) continue;
        if (shapes.refusal) response.content = { [shapes.refusal.contentType]: { schema: shapes.refusal.schema } };
        if (!shapes.wwwAuthenticate && response.headers) delete response.headers["WWW-Authenticate"];
      }
    }
  }
  return shaped;
}

interface Response {
  description: string;
  headers?: Record<string, unknown>;
  content?: Record<string, unknown>;
}
