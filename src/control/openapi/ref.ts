/** The one `$ref` helper of the OpenAPI document: a reference to a named component. */
export function ref(kind: "schemas" | "headers" | "responses", name: string): { $ref: string } {
  return { $ref: `#/components/${kind}/${name}` };
}
