/** The OpenAPI 3.1 document of the whole surface (to be completed: see issue 4). */
export function openApiDocument(version: string): Record<string, unknown> {
  return { openapi: "3.1.0", info: { title: "merchant-sandbox", version }, paths: {} };
}
