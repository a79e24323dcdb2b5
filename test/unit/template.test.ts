import { Faker, en, faker as globalFaker } from "@faker-js/faker";
import { describe, expect, it } from "vitest";
import { MAX_RENDERED_CHARS, RenderBudget, RenderedTooLarge } from "../../src/core/render-budget.js";
import { placeholderProblem, placeholdersIn, renderString, renderValue, TemplateError, type TemplateValues } from "../../src/scenarios/template.js";

/**
 * Unit tests of the `{{ … }}` placeholders of scenario response bodies (src/scenarios/template.ts):
 * rendering, the load-time check, and listing.
 */

const VALUES: TemplateValues = {
  request: { method: "POST", path: "/api/v2/payment/p1", query: "a=1&b=2" },
  merchant: { id: "m_1", api_key: "m-1-key" },
  scenario: { name: "outage", state: "started" },
  rule: { name: "first-call" },
  now: "2026-01-01T00:00:00.000Z",
};

const NO_MERCHANT: TemplateValues = { ...VALUES, merchant: undefined };

function seeded(seed = 1): Faker {
  const f = new Faker({ locale: [en] });
  f.seed(seed);
  return f;
}

const KNOWN = "request.method, request.path, request.query, merchant.id, merchant.api_key, scenario.name, scenario.state, rule.name, now";
const notKnown = (expr: string) => `'{{${expr}}}' is not a known placeholder; use ${KNOWN} or faker.<module>.<generator>`;
const notFaker = (expr: string) => `'{{${expr}}}' is not a faker generator; write it like {{faker.string.uuid}} or {{faker.person.fullName}}`;

describe("renderString", () => {
  it("fills every value placeholder", () => {
    const text =
      "{{request.method}} {{request.path}}?{{request.query}} by {{merchant.id}} ({{merchant.api_key}}) in {{scenario.name}}/{{scenario.state}} rule {{rule.name}} at {{now}}";
    expect(renderString(text, VALUES, seeded(), new RenderBudget())).toBe(
      "POST /api/v2/payment/p1?a=1&b=2 by m_1 (m-1-key) in outage/started rule first-call at 2026-01-01T00:00:00.000Z",
    );
  });

  it("allows spaces inside the braces", () => {
    expect(renderString("[{{ rule.name }}] [{{   now}}] [{{scenario.name   }}]", VALUES, seeded(), new RenderBudget())).toBe(
      "[first-call] [2026-01-01T00:00:00.000Z] [outage]",
    );
  });

  it("leaves text without placeholders, single braces and unclosed ones as they are", () => {
    for (const text of ["", "plain text", "{rule.name}", "{{rule.name", "rule.name}}", '{"json": {"x": 1}}', "{ {rule.name} }"]) {
      expect(renderString(text, VALUES, seeded(), new RenderBudget())).toBe(text);
    }
  });

  it("fills the same placeholder every time it appears, and keeps surrounding braces", () => {
    expect(renderString("{{rule.name}}-{{rule.name}}", VALUES, seeded(), new RenderBudget())).toBe("first-call-first-call");
    expect(renderString("{{{rule.name}}}", VALUES, seeded(), new RenderBudget())).toBe("{first-call}");
  });

  it("a merchant placeholder is empty text when the request has no merchant", () => {
    expect(renderString("<{{merchant.id}}|{{merchant.api_key}}>", NO_MERCHANT, seeded(), new RenderBudget())).toBe("<|>");
  });

  it("an unknown value path renders empty (the loader refuses it before any request)", () => {
    expect(renderString("<{{request.body}}|{{nothing}}|{{}}>", VALUES, seeded(), new RenderBudget())).toBe("<||>");
  });

  it("faker generators use the faker given: the same seed gives the same sequence", () => {
    const reference = seeded(42);
    const expected = [reference.string.uuid(), reference.person.fullName(), reference.string.uuid()];
    const f = seeded(42);
    const rendered = [
      renderString("{{faker.string.uuid}}", VALUES, f, new RenderBudget()),
      renderString("{{ faker.person.fullName }}", VALUES, f, new RenderBudget()),
      renderString("{{faker.string.uuid}}", VALUES, f, new RenderBudget()),
    ];
    expect(rendered).toEqual(expected);
    expect(rendered[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(rendered[0]).not.toBe(rendered[2]);
    expect(renderString("{{faker.string.uuid}}", VALUES, seeded(43), new RenderBudget())).not.toBe(expected[0]);
  });

  it("each faker placeholder is called once per occurrence", () => {
    const reference = seeded(7);
    const a = reference.string.uuid();
    const b = reference.string.uuid();
    expect(renderString("{{faker.string.uuid}} {{faker.string.uuid}}", VALUES, seeded(7), new RenderBudget())).toBe(`${a} ${b}`);
  });

  it("non-string faker results are turned into text", () => {
    const reference = seeded(3);
    const n = reference.number.int();
    const bool = reference.datatype.boolean();
    expect(renderString("{{faker.number.int}}/{{faker.datatype.boolean}}", VALUES, seeded(3), new RenderBudget())).toBe(`${n}/${bool}`);
  });

  it("a faker placeholder that is not a generator throws a TemplateError naming it", () => {
    for (const expr of [
      "faker.nope.uuid",
      "faker.string",
      "faker.string.nope",
      "faker.string.uuid.extra",
      "faker._randomizer.next",
      "faker.string.constructor",
      "faker.string._private",
    ]) {
      let thrown: unknown;
      try {
        renderString(`x {{${expr}}} y`, VALUES, seeded(), new RenderBudget());
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(TemplateError);
      expect((thrown as TemplateError).expression).toBe(expr);
      expect((thrown as TemplateError).message).toBe(`the placeholder {{${expr}}} cannot be filled`);
    }
  });
});

describe("renderValue", () => {
  it("fills strings at any depth and leaves other JSON values and keys alone", () => {
    const body = {
      id: "{{merchant.id}}",
      n: 5,
      ok: true,
      none: null,
      list: ["{{request.method}}", 1, [false, "{{rule.name}}"], { at: "{{now}}" }],
      "{{rule.name}}": "keys stay",
      nested: { deeper: { path: "{{request.path}}" } },
    };
    const copy = structuredClone(body);
    expect(renderValue(body, VALUES, seeded(), new RenderBudget())).toEqual({
      id: "m_1",
      n: 5,
      ok: true,
      none: null,
      list: ["POST", 1, [false, "first-call"], { at: "2026-01-01T00:00:00.000Z" }],
      "{{rule.name}}": "keys stay",
      nested: { deeper: { path: "/api/v2/payment/p1" } },
    });
    expect(body).toEqual(copy); // the scenario's body is not changed in place
  });

  it("a bare string, number, boolean or null", () => {
    expect(renderValue("{{scenario.state}}", VALUES, seeded(), new RenderBudget())).toBe("started");
    expect(renderValue(12.5, VALUES, seeded(), new RenderBudget())).toBe(12.5);
    expect(renderValue(false, VALUES, seeded(), new RenderBudget())).toBe(false);
    expect(renderValue(null, VALUES, seeded(), new RenderBudget())).toBeNull();
    expect(renderValue([], VALUES, seeded(), new RenderBudget())).toEqual([]);
    expect(renderValue({}, VALUES, seeded(), new RenderBudget())).toEqual({});
  });

  it("fills faker placeholders in document order from one seeded faker", () => {
    const reference = seeded(9);
    const first = reference.string.uuid();
    const second = reference.string.uuid();
    expect(renderValue({ a: "{{faker.string.uuid}}", b: ["{{faker.string.uuid}}"] }, VALUES, seeded(9), new RenderBudget())).toEqual({
      a: first,
      b: [second],
    });
  });

  it("throws a TemplateError for a bad faker placeholder anywhere in the value", () => {
    expect(() => renderValue({ a: [{ b: "{{faker.nope.x}}" }] }, VALUES, seeded(), new RenderBudget())).toThrow(TemplateError);
  });
});

describe("placeholderProblem", () => {
  it("accepts every value path", () => {
    for (const expr of KNOWN.split(", ")) expect(placeholderProblem(expr, globalFaker)).toBeUndefined();
  });

  it("accepts faker generators", () => {
    for (const expr of ["faker.string.uuid", "faker.person.fullName", "faker.number.int", "faker.internet.email", "faker.string.alphanumeric"]) {
      expect(placeholderProblem(expr, globalFaker)).toBeUndefined();
    }
  });

  it("refuses anything else, saying what is accepted", () => {
    for (const expr of [
      "request",
      "merchant",
      "merchant.api_secret",
      "merchant.payment_token",
      "request.body",
      "Now",
      "rule",
      "",
      "process.env",
      "constructor",
      "__proto__",
    ]) {
      expect(placeholderProblem(expr, globalFaker)).toBe(notKnown(expr));
    }
  });

  it("refuses faker names that are not generators", () => {
    for (const expr of [
      "faker.nope.uuid",
      "faker.string",
      "faker.string.nope",
      "faker.string.uuid.extra",
      "faker._randomizer.next",
      "faker.string._private",
      "faker.string.constructor",
      "faker.seed.x",
      "faker.",
    ]) {
      expect(placeholderProblem(expr, globalFaker)).toBe(notFaker(expr));
    }
  });

  it("refuses names a faker module only inherits from Object.prototype (bug: they pass)", () => {
    // template.ts promises "Only own module/function names", but `mod[fn]` also finds inherited
    // Object.prototype methods: {{faker.string.toString}} passes the load check and renders
    // "[object Object]", {{faker.string.hasOwnProperty}} renders "false".
    for (const expr of ["faker.string.toString", "faker.string.valueOf", "faker.string.hasOwnProperty", "faker.person.isPrototypeOf"]) {
      expect(placeholderProblem(expr, globalFaker)).toBe(notFaker(expr));
    }
  });
});

describe("placeholdersIn", () => {
  it("lists the expressions in order, trimmed, repeats included", () => {
    expect(placeholdersIn("a {{ request.path }} b {{faker.string.uuid}} c {{request.path}}")).toEqual([
      "request.path",
      "faker.string.uuid",
      "request.path",
    ]);
  });

  it("finds nothing in text without placeholders", () => {
    expect(placeholdersIn("")).toEqual([]);
    expect(placeholdersIn("{single} {{unclosed")).toEqual([]);
  });

  it("an empty placeholder is listed as empty, and inner braces end a placeholder", () => {
    expect(placeholdersIn("{{}} {{  }}")).toEqual(["", ""]);
    expect(placeholdersIn("{{{now}}}")).toEqual(["now"]);
    expect(placeholdersIn("{{a{b}}")).toEqual([]);
  });

  it("is reusable: the global pattern keeps no state between calls", () => {
    expect(placeholdersIn("{{now}}")).toEqual(["now"]);
    expect(placeholdersIn("{{now}}")).toEqual(["now"]);
    expect(renderString("{{now}}", VALUES, seeded(), new RenderBudget())).toBe(VALUES.now);
    expect(renderString("{{now}}", VALUES, seeded(), new RenderBudget())).toBe(VALUES.now);
  });
});

describe("the bound on what one answer renders", () => {
  it("stops a template whose placeholders print past the bound while it renders, before the text is built", () => {
    const long = { ...VALUES, request: { ...VALUES.request, path: `/${"p".repeat(15_000)}` } };
    const body = { x: Array.from({ length: 3_700 }, () => "{{request.path}}").join("") };
    const budget = new RenderBudget();
    expect(() => renderValue(body, long, seeded(), budget)).toThrow(RenderedTooLarge);
    expect(() => budget.spend(0)).toThrow(RenderedTooLarge);
  });

  it("lets an answer of exactly the bound through, shared by every template of the answer", () => {
    const budget = new RenderBudget();
    // A template's own text counts, and each value it prints: "{{rule.name}}" spends 13 + 10.
    expect(renderString("x".repeat(MAX_RENDERED_CHARS - 23), VALUES, seeded(), budget)).toHaveLength(MAX_RENDERED_CHARS - 23);
    expect(renderString("{{rule.name}}", VALUES, seeded(), budget)).toBe("first-call");
    expect(() => renderString("y", VALUES, seeded(), budget)).toThrow(RenderedTooLarge);
  });
});
