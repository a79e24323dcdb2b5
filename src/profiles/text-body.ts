import { compileText, type TextRender } from "./template.js";

/**
 * A body that is not JSON (a profile's `text`): a framework's HTML error page, Go's text/plain
 * http.Error line, an XML fault. Its template's own text goes out as written; a value rendered into
 * an HTML or XML body is escaped, so a path or a message cannot add markup to the page.
 */

/** What a text body is sent as when the profile names no content type: what Go's http.Error sends. */
export const DEFAULT_TEXT_CONTENT_TYPE = "text/plain; charset=utf-8";

const MARKUP = /^(text\/html|application\/xhtml\+xml|text\/xml|application\/xml|application\/[\w.+-]+\+xml)\b/i;
const ENTITIES: Readonly<Record<string, string>> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Whether values rendered into a body of this content type are escaped as markup. */
export function isMarkup(contentType: string): boolean {
  return MARKUP.test(contentType.trim());
}

export function escapeMarkup(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c]!);
}

/** A text body's template compiled for its content type. */
export function compileTextBody(template: string, contentType: string): TextRender {
  return isMarkup(contentType) ? compileText(template, escapeMarkup) : compileText(template);
}
