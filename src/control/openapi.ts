import type { ShapedSchemas } from "../core/answer-shaper.js";
import { MERCHANT_ROUTE_TABLE } from "../endpoints/merchant-routes.js";
import { headers, securitySchemes } from "./openapi/components.js";
import { ROOT_ROUTE } from "./endpoints/ui.js";
import { controlDocs, rootDocs } from "./openapi/control-operations.js";
import { controlSchemas } from "./openapi/control-schemas.js";
import { merchantDocs } from "./openapi/merchant-operations.js";
import { merchantSchemas } from "./openapi/merchant-schemas.js";
import { pathsOf, shareResponses } from "./openapi/operations.js";
import { profileRefusals, shapeSuccesses } from "./openapi/profile-shapes.js";

/**
 * The OpenAPI 3.1 document of the whole surface, served at GET /__sandbox/openapi.json: the
 * merchant API as the sandbox simulates it (with every refusal and its stable code) and the
 * control plane. Its paths are generated from the route tables (the merchant API's, and the control
 * plane's, which its router passes in) and the hand-written prose of each operation in ./openapi/,
 * their refusal responses from the error catalogue. test/control/openapi.test.ts validates it and
 * drives every operation over HTTP to check each answer is documented.
 */
export function openApiDocument(
  version: string,
  controlRoutes: ReadonlyArray<{ path: string; methods: readonly string[] }>,
  /** The primary scenario's response profile, when it shapes answers (none for oauth). */
  profile?: { name: string; shapes: ShapedSchemas },
): Record<string, unknown> {
  // `/` is served beside the merchant API, and shaped as an unknown path of it is (rootDocs).
  const served = [...MERCHANT_ROUTE_TABLE, ROOT_ROUTE];
  const docs = { ...merchantDocs, ...rootDocs };
  const merchantPaths = profile
    ? shapeSuccesses(pathsOf(served, docs, profileRefusals(profile.shapes, profile.name)), profile.shapes, profile.name)
    : pathsOf(served, docs);
  const { paths, responses } = shareResponses({
    ...merchantPaths,
    ...pathsOf(controlRoutes, controlDocs),
  });
  return {
    openapi: "3.1.0",
    info: {
      title: "merchant-sandbox",
      version,
      summary: "A strict, explainable sandbox of a merchant payment API's authentication model.",
      description: [
        "merchant-sandbox simulates the **authentication model** of version 2 of a merchant payment API: credential exchange for a JWT access token, bearer auth on the payment and cashout groups, the separate merchant payment token of `POST /api/v2/payment/init`, and the deprecated `/api/login_check`. Payment, cashout and checkout business behaviour is not simulated: authenticated calls answer honest placeholders.",
        "",
        "Every refusal is `application/problem+json` (RFC 9457) that also carries the OAuth members `error` and `error_description`, plus a stable `code` (see the `ErrorCode` schema); its text says what was wrong and how to fix it, and never contains a secret or a token.",
        "",
        "The credentials a request carries select the merchant, and so its scenario: scenario rules may script outages, rate limits, expired or revoked tokens, rotated keys and secrets, delays and dropped connections. An answer shaped by a rule carries `X-Sandbox-Rule`. Requests no merchant can be read from take the primary scenario's settings.",
        "",
        "Every merchant API path is served at the root and under a session's base URL, `/s/{session_id}` (the `base_url` POST /__sandbox/sessions answers; each path lists both servers): every request under it belongs to that session, whatever its credentials, and shows in its journal and report. An unknown or ended session answers `404 session_url_unknown`; another merchant's credentials under it `401 session_credentials_mismatch`.",
        "",
        "Anything not listed here answers `404 not_found` with the list of routes and a hint for near misses (trailing slash, another API version).",
        "",
        "The built-in default merchant: api_key `sandbox-api-key`, api_secret `sandbox-api-secret`, payment token `sandbox-payment-token`, login `merchant@sandbox.test` / `sandbox-password`, merchant id `merchant_sandbox_default`, scopes `payment cashout`.",
      ].join("\n"),
      license: { name: "MIT", identifier: "MIT" },
    },
    servers: [
      { url: "/", description: "This sandbox (the server that serves this document)." },
      { url: "http://localhost:4010", description: "`merchant-sandbox serve` and the image, by default." },
    ],
    tags: [
      { name: "Merchant API", description: "The merchant-facing API (version 2) as the sandbox simulates it." },
      {
        name: "Deprecated",
        description: "Still answered, with Deprecation, Sunset and Link headers on every answer; integrations must move off it.",
      },
      {
        name: "Control plane",
        description:
          "Under /__sandbox/: sessions, clocks, resets, the request journal, the integration report and token minting, for test harnesses. Never used by the integration itself. Guarded by the admin token when the sandbox was started with one; only health answers with --no-control-plane.",
      },
    ],
    paths,
    components: {
      schemas: { ...merchantSchemas, ...controlSchemas },
      responses,
      headers,
      securitySchemes,
    },
  };
}
