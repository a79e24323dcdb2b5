import type { Argv } from "yargs";
import { SERVER_LIMIT_DEFAULTS } from "../../adapters/node-http.js";
import { ALGORITHMS, DEFAULT_SETTINGS, LOGIN_MODES, LOGIN_TOKEN_MODES, PRECEDENCES, SANDBOX_DEFAULTS } from "../../core/config.js";
import { durationText } from "../../core/duration.js";
import { DURATION_LIMITS } from "../../core/duration-limits.js";
import { LOG_FORMATS, type LogFormat } from "../../log/request-log.js";
import { EVENT_LIMIT_DEFAULTS } from "../../control/events.js";

/**
 * `merchant-sandbox serve`'s flags: the yargs command definition, without its handler (start.ts).
 * The defaults shown are read from where the sandbox and the server apply them (DEFAULT_SETTINGS,
 * SANDBOX_DEFAULTS, EVENT_LIMIT_DEFAULTS, SERVER_LIMIT_DEFAULTS); only the CLI's own (port, host,
 * log format, shutdown grace) are written here.
 */

/**
 * The default of a flag that a profile (--profile's jwt section) may also set: shown by --help and
 * the docs, never filled in by yargs. A filled-in default cannot be told from a typed one, so the
 * profile won over `--alg RS256` or MERCHANT_SANDBOX_ALG=RS256; left undefined, a flag is given
 * exactly when the user gave it, whatever its value, and createSandbox applies the profile's value,
 * then DEFAULT_SETTINGS, to the others.
 */
const shownOnly = (value: string) => ({ defaultDescription: value });

export interface ServeArgs {
  port: number;
  host: string;
  /** The five a profile's jwt section also sets: undefined when neither the flag nor its variable was given. */
  tokenTtl?: string;
  leeway?: string;
  alg?: string;
  issuer?: string;
  audience?: string;
  seed: number;
  loginMode: string;
  loginToken: string;
  credentialPrecedence: string;
  paymentTokenTransport: string;
  disabledMerchantStatus: number;
  signingKey?: string;
  logFormat: LogFormat;
  scenario?: string[];
  scenariosDir?: string;
  profile?: string;
  controlPlane: boolean;
  adminToken?: string;
  allowedHosts?: string;
  journalSize: number;
  state?: string;
  requireState: boolean;
  maxSessions: number;
  maxEventSubscribers: number;
  eventBufferSize: number;
  sessionIdleTtl: string;
  maxBodyBytes: number;
  maxHeaderBytes: number;
  maxHeaders: number;
  headersTimeout: string;
  requestTimeout: string;
  writeTimeout: string;
  shutdownGrace: string;
}

/** The CLI's own defaults (the library has no port or host). */
const PORT = 4010;
const HOST = "127.0.0.1";

const SETTINGS = "Token and auth settings:";
const LIMITS = "Limits (a request over one gets a problem+json refusal, never a crash):";

/** A flag given twice means its last value, as in most CLIs (yargs would make it an array). */
const last = <T>(value: T | T[]): T => (Array.isArray(value) ? (value.at(-1) as T) : value);

/** serve's name, description, flags and examples; commands/serve.ts adds the handler. */
export const SERVE_COMMAND = {
  command: "serve",
  describe: `Start the sandbox HTTP server (default http://${HOST}:${PORT})`,
  builder: (y: Argv) =>
    y
      .option("port", { coerce: last, alias: "p", type: "number", default: PORT, describe: "Port to listen on (0 picks a free one)" })
      .option("host", { coerce: last, type: "string", default: HOST, describe: "Address to bind (0.0.0.0 to accept outside connections)" })
      .option("token-ttl", {
        coerce: last,
        type: "string",
        ...shownOnly(durationText(DEFAULT_SETTINGS.tokenTtlSeconds * 1000)),
        group: SETTINGS,
        describe: `Access token lifetime: 3600, 90s, 59m, 1h; at most ${DURATION_LIMITS.tokenTtl.text}`,
      })
      .option("leeway", {
        coerce: last,
        type: "string",
        ...shownOnly(durationText(DEFAULT_SETTINGS.leewaySeconds * 1000)),
        group: SETTINGS,
        describe: `Clock skew tolerated when checking exp/nbf/iat; at most ${DURATION_LIMITS.leeway.text} (a profile's jwt.leeway sets it for the scenarios answering in it)`,
      })
      .option("alg", {
        coerce: last,
        type: "string",
        choices: [...ALGORITHMS],
        ...shownOnly(DEFAULT_SETTINGS.algorithm),
        group: SETTINGS,
        describe: "JWT signing algorithm",
      })
      .option("issuer", {
        coerce: last,
        type: "string",
        ...shownOnly(DEFAULT_SETTINGS.issuer),
        group: SETTINGS,
        describe: "The tokens' iss claim",
      })
      .option("audience", {
        coerce: last,
        type: "string",
        ...shownOnly(DEFAULT_SETTINGS.audience),
        group: SETTINGS,
        describe: "The tokens' aud claim",
      })
      .option("signing-key", {
        coerce: last,
        type: "string",
        group: SETTINGS,
        describe:
          "Signing key, or @path to a file: PKCS#8 PEM or private JWK (RS256/ES256), secret >= 32 bytes (HS256). Share it so replicas accept each other's tokens. Default: generated at start",
      })
      .option("credential-precedence", {
        coerce: last,
        type: "string",
        choices: [...PRECEDENCES],
        default: DEFAULT_SETTINGS.credentialPrecedence,
        group: SETTINGS,
        describe: "A credential sent in both body and header",
      })
      .option("payment-token-transport", {
        coerce: last,
        type: "string",
        // The default transport is `{ kind: "authorization" }`, written as its kind.
        default: DEFAULT_SETTINGS.paymentTokenTransport.kind,
        group: SETTINGS,
        describe: "Where payment/init reads the payment token: authorization, header:<Name>, body:<field>",
      })
      .option("disabled-merchant-status", {
        coerce: last,
        type: "number",
        choices: [401, 403],
        default: DEFAULT_SETTINGS.disabledMerchantStatus,
        group: SETTINGS,
        describe: "Status for a disabled merchant's token request",
      })
      .option("login-mode", {
        coerce: last,
        type: "string",
        choices: [...LOGIN_MODES],
        default: DEFAULT_SETTINGS.loginMode,
        group: SETTINGS,
        describe: "Deprecated /api/login_check: works with Deprecation headers, or 410",
      })
      .option("login-token", {
        coerce: last,
        type: "string",
        choices: [...LOGIN_TOKEN_MODES],
        default: DEFAULT_SETTINGS.loginToken,
        group: SETTINGS,
        describe: "The deprecated login's token on payment and cashout: accepted (with Deprecation headers), or refused as not an access token",
      })
      .option("profile", {
        coerce: last,
        type: "string",
        group: "Scenarios:",
        describe:
          "Answer in your provider's shapes: a response profile, oauth (default), lexik, spring, laravel, camel, envelope, or a profile file (YAML/JSON). Its jwt section sets --alg, --token-ttl, --leeway, --issuer and --audience unless you give them (as flags or variables, whatever the value)",
      })
      .option("scenario", {
        alias: "s",
        type: "string",
        array: true,
        group: "Scenarios:",
        describe: "Load a scenario: a library name (see `merchant-sandbox scenarios`) or a YAML/JSON file. Repeatable; the first is the primary one",
      })
      .option("scenarios-dir", { coerce: last, type: "string", group: "Scenarios:", describe: "Load every scenario file of this folder" })
      .option("control-plane", {
        coerce: last,
        type: "boolean",
        default: SANDBOX_DEFAULTS.controlPlane,
        group: "Control plane:",
        describe: "Serve /__sandbox/ (sessions, clock, journal, report); --no-control-plane leaves only health",
      })
      .option("admin-token", {
        coerce: last,
        type: "string",
        group: "Control plane:",
        describe: "Require this token (Authorization: Bearer or X-Admin-Token) on the control plane, health excepted; at least 16 characters",
      })
      .option("allowed-hosts", {
        coerce: last,
        type: "string",
        group: "Control plane:",
        describe:
          "Comma-separated Host names the control plane answers to, beyond localhost, IP addresses, single-label names (docker/CI service names) and --host: 'sandbox.ci.example', '.example.test' for a domain and its subdomains, '*' for any (unsafe: web pages get in through DNS rebinding)",
      })
      .option("state", {
        coerce: last,
        type: "string",
        group: "Shared state:",
        describe:
          "Share sessions, clocks, keys, revocations, the journal and the event streams with other replicas through Redis: redis://[:password@]host:port[/db] or rediss:// (docs/deployment.md). Default: in memory, this process only",
      })
      .option("require-state", {
        coerce: last,
        type: "boolean",
        default: false,
        group: "Shared state:",
        describe:
          "Exit (code 3; 2 for a bad --state) when the shared state cannot be read at start. Default: start unhealthy, answer 503 (health too), and serve once Redis answers",
      })
      .option("journal-size", {
        coerce: last,
        type: "number",
        default: SANDBOX_DEFAULTS.journalSize,
        group: LIMITS,
        describe: "Requests the journal keeps (oldest dropped first)",
      })
      .option("max-sessions", {
        coerce: last,
        type: "number",
        default: SANDBOX_DEFAULTS.maxSessions,
        group: LIMITS,
        describe: "Sessions at once (creating one more gets 429)",
      })
      .option("max-event-subscribers", {
        coerce: last,
        type: "number",
        default: EVENT_LIMIT_DEFAULTS.maxSubscribers,
        group: LIMITS,
        describe: "Open event streams (GET /__sandbox/events) at once (one more gets 429)",
      })
      .option("event-buffer-size", {
        coerce: last,
        type: "number",
        default: EVENT_LIMIT_DEFAULTS.bufferSize,
        group: LIMITS,
        describe: "Events a slow stream client may fall behind before its stream ends with 'overflow'",
      })
      .option("max-body-bytes", {
        coerce: last,
        type: "number",
        default: DEFAULT_SETTINGS.maxBodyBytes,
        group: LIMITS,
        describe: "Largest request body (larger gets 413)",
      })
      .option("max-header-bytes", {
        coerce: last,
        type: "number",
        default: SERVER_LIMIT_DEFAULTS.maxHeaderBytes,
        group: LIMITS,
        describe: "Largest header section (larger gets 431)",
      })
      .option("max-headers", {
        coerce: last,
        type: "number",
        default: SERVER_LIMIT_DEFAULTS.maxHeaders,
        group: LIMITS,
        describe: "Most header fields in a request (more gets 431)",
      })
      .option("headers-timeout", {
        coerce: last,
        type: "string",
        default: durationText(SERVER_LIMIT_DEFAULTS.headersTimeoutMs),
        group: LIMITS,
        describe: `Time a client has to send its headers (then 408); 1s to ${DURATION_LIMITS.serverTimeout.text}`,
      })
      .option("request-timeout", {
        coerce: last,
        type: "string",
        default: durationText(SERVER_LIMIT_DEFAULTS.requestTimeoutMs),
        group: LIMITS,
        describe: `Time a client has to send its whole request (then 408); 1s to ${DURATION_LIMITS.serverTimeout.text}`,
      })
      .option("write-timeout", {
        coerce: last,
        type: "string",
        default: durationText(SERVER_LIMIT_DEFAULTS.writeTimeoutMs),
        group: LIMITS,
        describe: "Time a client has to read what waits for it once a buffer's worth waits (then the connection is closed)",
      })
      .option("shutdown-grace", {
        coerce: last,
        type: "string",
        default: "10s",
        group: LIMITS,
        describe: "On SIGTERM/SIGINT, time the requests in flight have to be answered before they are cut (a second signal stops at once)",
      })
      .option("session-idle-ttl", {
        coerce: last,
        type: "string",
        default: SANDBOX_DEFAULTS.sessionIdleTtl,
        group: "Control plane:",
        describe: `Sessions unused this long are reaped; 1s to ${DURATION_LIMITS.sessionIdle.text}`,
      })
      .option("seed", { coerce: last, type: "number", default: SANDBOX_DEFAULTS.seed, describe: "Seed for generated ids (same seed, same sequence)" })
      .option("log-format", {
        coerce: last,
        type: "string",
        choices: [...LOG_FORMATS],
        default: "text",
        describe: "Request log on stdout: one line per request",
      })
      .example("$0 serve", "the default merchant on :4010 (api_key sandbox-api-key)")
      .example("$0 serve --token-ttl 60s --alg ES256", "short-lived ES256 tokens")
      .example("$0 serve --scenario token-endpoint-outage", "a library scenario, beside the default merchant")
      .example("$0 serve --profile lexik", "tokens and refusals in the shapes of Symfony's LexikJWTAuthenticationBundle")
      .example("$0 serve --scenarios-dir ./scenarios", "every scenario of a folder: one server for a whole suite")
      .example("MERCHANT_SANDBOX_PORT=8080 $0 serve", "every flag is also an environment variable") as unknown as Argv<ServeArgs>,
};
