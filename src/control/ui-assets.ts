import { readFileSync } from "node:fs";
import { NotFound } from "../core/errors.js";

/**
 * The QA page's files (GET /__sandbox/ui/…), built by `ui/build.mjs` into dist/ui/. Read from disk
 * the first time each is asked for and kept by this sandbox, so a sandbox that nobody opens the
 * page of never reads them. Only these names are served: a request can never
 * name a file of its own choosing.
 */
const CONTENT_TYPES = {
  "index.html": "text/html; charset=utf-8",
  "app.js": "text/javascript; charset=utf-8",
  "app.css": "text/css; charset=utf-8",
} as const;
export type UiAssetName = keyof typeof CONTENT_TYPES;

/** Where the build puts the page: the same from src/control/ (tests), dist/control/ and the bundle in dist/bin/. */
export const UI_DIR = new URL("../../dist/ui/", import.meta.url);

export interface UiAsset {
  body: string;
  contentType: string;
}

export class UiAssets {
  private readonly read = new Map<UiAssetName, UiAsset>();

  constructor(private readonly dir: URL = UI_DIR) {}

  /** The file, or undefined for a name that is not one of the page's. Throws NotFound when the page was not built. */
  get(name: string): UiAsset | undefined {
    if (!Object.hasOwn(CONTENT_TYPES, name)) return undefined;
    const known = name as UiAssetName;
    const cached = this.read.get(known);
    if (cached) return cached;
    let body: string;
    try {
      body = readFileSync(new URL(known, this.dir), "utf8");
    } catch {
      throw new NotFound(
        "The QA page is not built into this copy of merchant-sandbox (dist/ui/ has no " +
          known +
          "): run `npm run build`, or use the package or image, which ship it.",
      );
    }
    const asset = { body, contentType: CONTENT_TYPES[known] };
    this.read.set(known, asset);
    return asset;
  }

  /** The names served, for the 404 of any other. */
  static names(): string[] {
    return Object.keys(CONTENT_TYPES);
  }
}
