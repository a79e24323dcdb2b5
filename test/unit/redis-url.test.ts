import { describe, expect, it } from "vitest";
import { parseRedisUrl } from "../../src/store/redis-url.js";
import { redactUrlText } from "../../src/store/redis-url.js";

const FORM = "redis://[:PASSWORD@]HOST:PORT[/DB] (or rediss:// for TLS)";
const PASSWORD = "hunter2-Secret";

describe("the state URL", () => {
  it.each([
    [
      "redis://127.0.0.1:6379",
      { host: "127.0.0.1", port: 6379, db: 0, username: undefined, password: undefined, tls: false, shownAs: "redis://127.0.0.1:6379/0" },
    ],
    [
      "redis://localhost",
      { host: "localhost", port: 6379, db: 0, username: undefined, password: undefined, tls: false, shownAs: "redis://localhost:6379/0" },
    ],
    [
      `redis://:${PASSWORD}@cache.internal:6380/2`,
      {
        host: "cache.internal",
        port: 6380,
        db: 2,
        username: undefined,
        password: PASSWORD,
        tls: false,
        shownAs: "redis://:***@cache.internal:6380/2",
      },
    ],
    [
      "rediss://app:p%40ss@redis.example:6390",
      { host: "redis.example", port: 6390, db: 0, username: "app", password: "p@ss", tls: true, shownAs: "rediss://app:***@redis.example:6390/0" },
    ],
    [
      "redis://[::1]:7000/15",
      { host: "::1", port: 7000, db: 15, username: undefined, password: undefined, tls: false, shownAs: "redis://[::1]:7000/15" },
    ],
  ])("reads %s, and shows it with its password hidden", (url, target) => {
    expect(parseRedisUrl(url)).toEqual(target);
  });

  it.each([
    ["", `The state URL is empty: write it as ${FORM}, e.g. redis://127.0.0.1:6379/0.`],
    ["localhost:6379", `The state URL "localhost:6379" is not a redis:// or rediss:// URL (its scheme is "localhost:"): write it as ${FORM}.`],
    [`http://:${PASSWORD}@h:1`, `The state URL "http://***@h:1" is not a redis:// or rediss:// URL (its scheme is "http:"): write it as ${FORM}.`],
    [
      `redis://:${PASSWORD}@host:99999`,
      `The state URL "redis://***@host:99999" is not a URL: write it as ${FORM}; in a password, write / ? # @ and other reserved characters %-escaped (%2F %3F %23 %40).`,
    ],
    [
      `redis://:pass/${PASSWORD}@host:1`,
      `The state URL "redis://***@host:1" is not a URL: write it as ${FORM}; in a password, write / ? # @ and other reserved characters %-escaped (%2F %3F %23 %40).`,
    ],
    ["redis:/host:1", `The state URL "redis:/host:1" names no host: write it as ${FORM}.`],
    [
      `redis://:${PASSWORD}@host:6379/0?tls=true`,
      `The state URL "redis://***@host:6379/0?***" has a query (?…), which is not read: remove it and write the URL as ${FORM}.`,
    ],
    [
      `redis://:${PASSWORD}@host:6379/db`,
      `The state URL "redis://***@host:6379/***" has a path other than /DB: after the port give nothing or /DB, a database number (/0 by default).`,
    ],
    ["redis://host:0", `The state URL "redis://host:0" has port 0: give the port Redis listens on (6379 by default).`],
    [
      `redis://:%ZZ${PASSWORD}@host`,
      `The state URL "redis://***@host" has a password with a broken %-escape: write each reserved character as %XX (e.g. %40 for @).`,
    ],
    // The forms other clients read a password from, none quoting it (round four of the attack rounds).
    [
      `redis://127.0.0.1:6379?password=${PASSWORD}`,
      `The state URL "redis://127.0.0.1:6379?***" has a query (?…), which is not read: remove it and write the URL as ${FORM}.`,
    ],
    [
      `redis://127.0.0.1:6379/0?password=${PASSWORD}`,
      `The state URL "redis://127.0.0.1:6379/0?***" has a query (?…), which is not read: remove it and write the URL as ${FORM}.`,
    ],
    [
      `redis://:${PASSWORD}`,
      `The state URL "redis://:***" is not a URL: write it as ${FORM}; in a password, write / ? # @ and other reserved characters %-escaped (%2F %3F %23 %40).`,
    ],
    [
      `redis://${PASSWORD}@cache.internal:6379`,
      'The state URL "redis://***@cache.internal:6379" gives a user name and no password, so it would not authenticate: if that is the password, write redis://:PASSWORD@HOST:PORT; for a user, redis://USER:PASSWORD@HOST:PORT.',
    ],
    [
      `redis://cache.internal/${PASSWORD}`,
      `The state URL "redis://cache.internal/***" has a path other than /DB: after the port give nothing or /DB, a database number (/0 by default).`,
    ],
    [
      `redis://cache.internal#${PASSWORD}`,
      `The state URL "redis://cache.internal#***" has a fragment (#…), which is not read: remove it and write the URL as ${FORM}.`,
    ],
  ])("refuses %j saying what is wrong and how to write it, never quoting the password", (url, message) => {
    expect(() => parseRedisUrl(url)).toThrow(new TypeError(message));
    expect(message).not.toContain(PASSWORD);
  });

  it("hides the user-info, a port that is not a number, a path other than /DB, a query and a fragment of a URL it quotes", () => {
    expect(redactUrlText(`redis://u:${PASSWORD}@h:1`)).toBe('"redis://***@h:1"');
    expect(redactUrlText(`${PASSWORD}@h`)).toBe('"***@h"');
    expect(redactUrlText(`redis://:a@b@${PASSWORD}@h`)).toBe('"redis://***@h"');
    expect(redactUrlText(`h:${PASSWORD}`)).toBe('"***"');
    expect(redactUrlText(`redis://h:1/2?password=${PASSWORD}#x`)).toBe('"redis://h:1/2?***"');
    expect(redactUrlText("redis://h:1")).toBe('"redis://h:1"');
    expect(redactUrlText("redis://[::1]:7000/15")).toBe('"redis://[::1]:7000/15"');
    // A bare password (--state "$REDIS_PASSWORD"), and one after a space (found in review).
    expect(redactUrlText(PASSWORD)).toBe('"***"');
    expect(redactUrlText(`redis://host ${PASSWORD}`)).toBe('"redis://host***"');
    expect(redactUrlText(`redis://host --password ${PASSWORD}`)).toBe('"redis://host***"');
    expect(redactUrlText("127.0.0.1:6379")).toBe('"127.0.0.1:6379"');
  });
});
