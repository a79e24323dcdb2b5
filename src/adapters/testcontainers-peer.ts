/**
 * testcontainers is an optional peer dependency: loaded here, so a project without it (or with a
 * release that does not run on this Node) learns which one to install instead of a bare
 * "Cannot find package". 12.x declares Node 22.22 and up and fails at import on Node 20 (its
 * undici 8), so the range is 11.x while engines says Node 20.19.
 */
export async function loadTestcontainers(
  load: () => Promise<typeof import("testcontainers")> = () => import("testcontainers"),
): Promise<typeof import("testcontainers")> {
  try {
    return await load();
  } catch (error) {
    const code = (error as { code?: string }).code;
    const why = code === "ERR_MODULE_NOT_FOUND" ? "it is not installed" : `it failed to load (${(error as Error).message})`;
    throw new Error(
      `merchant-sandbox/testcontainers needs the testcontainers package, and ${why}: npm install --save-dev testcontainers@^11 (11.x runs on Node 20 and 22; 12.x needs Node 22.22 or later).`,
      { cause: error },
    );
  }
}
