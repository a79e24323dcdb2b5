/**
 * Seven lines: a valid scenario with one merchant, for loader tests whose texts add to it. Its last
 * line is line 7, so a key the test appends stands on line 8.
 */
export const ONE_MERCHANT_SCENARIO = `name: s
description: d
merchants:
  - id: m1
    api_key: k1
    api_secret: s1
    payment_token: p1
`;
