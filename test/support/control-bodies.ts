/**
 * A good body and bad ones for each control-plane operation that takes a body, by path template:
 * both OpenAPI tests drive every operation with them, so a new operation gets its probes here once.
 */

export const GOOD_BODIES: Record<string, string> = {
  "/__sandbox/sessions": "{}",
  "/__sandbox/clock": '{"advance": "1s"}',
  "/__sandbox/sessions/{id}/clock": '{"advance": "1s"}',
  "/__sandbox/tokens": '{"variant": "expired"}',
  "/__sandbox/scan": '{"text": "a log line"}',
  "/__sandbox/sessions/{id}/actions":
    '{"now": {"revoke_token": "all"}, "next": {"endpoint": "token", "times": 1, "then": {"respond": {"status": 503}}}}',
};
export const BAD_BODIES: Record<string, string[]> = {
  "/__sandbox/sessions": ['{"scenario": 1}', '{"scenario": "no-such-scenario"}', '{"profile": ""}', '{"profile": "nope"}'],
  "/__sandbox/clock": [
    "{}",
    '{"set": "yesterday"}',
    '{"advance": "9999999d"}',
    '{"advance": "soon"}',
    '{"freeze": "yes"}',
    '{"set": "0000-01-01T00:00:00Z"}',
  ],
  "/__sandbox/sessions/{id}/clock": ['{"set": "0000-01-01T00:00:00Z"}', '{"advance": -1e20}', '{"advance": 1e300}'],
  "/__sandbox/tokens": ['{"variant": 1}', '{"variant": "constructor"}', '{"ttl": "0s"}', '{"merchant": "nobody"}', '{"ttl": -5}'],
  "/__sandbox/scan": ["{}", '{"text": 1}'],
  "/__sandbox/sessions/{id}/actions": [
    "{}",
    '{"now": {"revoke_tokens": "all"}}',
    '{"now": {"respond": {"status": 503}}}',
    '{"merchant": "nobody", "now": {"login_gone": true}}',
    '{"now": {"advance_clock": "-999999d"}}',
    '{"next": {"times": 1001, "then": {"delay": "1s"}}}',
  ],
};
