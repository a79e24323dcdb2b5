/**
 * The bound on what one answer's templates render (a scenario rule's `respond`, a session
 * action's, a response profile's body and headers), counted while they render: a template's
 * placeholders may print request values (a path of up to the server's limit) or whole objects
 * as often as the template repeats them, so the answer is stopped at the bound, never built first.
 */

/** The most characters the templates of one answer may render, body and headers together. */
export const MAX_RENDERED_CHARS = 262_144;

/** An answer's templates rendered past MAX_RENDERED_CHARS; the rendering stopped there. */
export class RenderedTooLarge extends Error {
  constructor() {
    super(
      `its answer renders to more than ${MAX_RENDERED_CHARS.toLocaleString("en")} characters, the bound of one answer: its placeholders print request values or whole objects so often that the answer would be that large; print each once, or fewer`,
    );
  }
}

/** What one answer's templates may still render: every template spends from it as it renders. */
export class RenderBudget {
  private left = MAX_RENDERED_CHARS;
  /** What each object printed whole measures, measured once per answer; made only when an object is printed. */
  private sizes: WeakMap<object, number> | undefined;

  /** Spends `chars`; throws RenderedTooLarge past the bound. */
  spend(chars: number): void {
    this.left -= chars;
    if (this.left < 0) throw new RenderedTooLarge();
  }

  /** Spends what `value` prints as: a string its length, an object its JSON's, anything else its text's. */
  spendValue(value: unknown): void {
    if (typeof value === "string") this.spend(value.length);
    else if (value === null || typeof value !== "object") this.spend(String(value).length);
    else {
      this.sizes ??= new WeakMap();
      let size = this.sizes.get(value);
      if (size === undefined) {
        size = JSON.stringify(value)?.length ?? 0;
        this.sizes.set(value, size);
      }
      this.spend(size);
    }
  }
}
