import { TIME_FORMATS } from "../../src/profiles/time-value.js";
import { RenderBudget } from "../../src/core/render-budget.js";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsPlugin from "ajv-formats";
import { describe, expect, it } from "vitest";
import { PLACEHOLDERS } from "../../src/profiles/placeholders.js";
import { REQUEST_ID_PATTERNS } from "../../src/profiles/request-id.js";
import { constantDoc, resolver, templateSchema, textSchema } from "../../src/profiles/template-schema.js";
import { compileTemplate, compileText } from "../../src/profiles/template.js";
import { TimeValue } from "../../src/profiles/time-value.js";

/**
 * What a template renders, as the OpenAPI document's JSON Schema: per-request values (a request
 * id, a time) are patterns and formats, never constants; what the answer fixes is a constant.
 * Each schema is checked against what the renderer really makes of the same template.
 */

const ajv = new Ajv2020({ strict: true, strictTypes: false, allowUnionTypes: true });
// ajv-formats ships as CommonJS with a default member.
const addFormats = ((addFormatsPlugin as unknown as { default?: unknown }).default ?? addFormatsPlugin) as (ajv: Ajv2020) => void;
addFormats(ajv);

const resolve = resolver(PLACEHOLDERS.refusal, "hex32", { code: constantDoc("token_expired"), status: constantDoc(401) }, (name) =>
  name === "token_expires_at" ? "rfc3339" : "rfc3339-ms",
);
const values = {
  request_id: "0123456789abcdef0123456789abcdef",
  now: new TimeValue(1_767_225_600.25),
  token_expires_at: new TimeValue(1_767_225_000, "rfc3339"),
  code: "token_expired",
  status: 401,
  message: "anything",
};

describe("template schemas: per-request values as patterns and formats, never constants", () => {
  it("a request id is its shape's pattern, in a body and inside text", () => {
    expect(templateSchema("{{request_id}}", resolve)).toEqual({ type: "string", pattern: REQUEST_ID_PATTERNS.hex32 });
    const text = textSchema("req-{{request_id}}", resolve);
    expect(text).toEqual({ type: "string", pattern: "^req-[0-9a-f]{32}$" });
    expect(ajv.validate(text, compileText("req-{{request_id}}")(values, new RenderBudget()))).toBe(true);
  });

  it("times by their format: date-time with the variant's pattern, unix as integers, http-date by pattern", () => {
    for (const format of TIME_FORMATS) {
      const template = { at: `{{now:${format}}}` };
      const schema = templateSchema(template, resolve);
      expect(ajv.validate(schema, compileTemplate(template)(values, new RenderBudget())), `${format}: ${ajv.errorsText()}`).toBe(true);
      expect(JSON.stringify(schema)).not.toContain("2026");
    }
    expect(templateSchema("{{now:unix}}", resolve)).toEqual({ type: "integer", minimum: 0 });
    expect(templateSchema("{{now:rfc3339-offset}}", resolve)).toEqual({
      type: "string",
      format: "date-time",
      pattern: "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\+00:00$",
    });
    // A refused token's expiry is null when the sandbox read none: in text, nothing.
    const expired = textSchema("Jwt expired at {{token_expires_at}}", resolve);
    expect(ajv.validate(expired, compileText("Jwt expired at {{token_expires_at}}")(values, new RenderBudget()))).toBe(true);
    expect(ajv.validate(expired, compileText("Jwt expired at {{token_expires_at}}")({ ...values, token_expires_at: null }, new RenderBudget()))).toBe(
      true,
    );
    expect(ajv.validate(expired, "Jwt expired at yesterday")).toBe(false);
  });

  it("what the answer fixes is a constant, also inside text; literals are escaped", () => {
    expect(templateSchema({ code: "{{code}}", status: "{{status}}" }, resolve)).toEqual({
      type: "object",
      properties: { code: { type: "string", const: "token_expired" }, status: { type: "integer", const: 401 } },
      required: ["code", "status"],
    });
    expect(textSchema("E{{status}}", resolve)).toEqual({ type: "string", const: "E401" });
    const schema = textSchema("a.b (c) [{{request_id}}] $x?", resolve);
    expect(ajv.validate(schema, compileText("a.b (c) [{{request_id}}] $x?")(values, new RenderBudget()))).toBe(true);
    expect(ajv.validate(schema, "aXb (c) [0123456789abcdef0123456789abcdef] $x?")).toBe(false);
  });

  it("free text is a string, and runs of it stay one (a pattern linear to match)", () => {
    expect(textSchema("{{message}}", resolve)).toEqual({ type: "string" });
    expect(textSchema("{{message}}{{instance}} at {{path}}{{method}}", resolve)).toEqual({ type: "string", pattern: "^[\\s\\S]* at [\\s\\S]*$" });
  });
});
