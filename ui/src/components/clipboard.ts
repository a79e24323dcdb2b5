/**
 * Copies text with the Clipboard API; where it is missing or refused (an insecure origin, a
 * browser without permission), selects the text on the page instead so the user can press Ctrl+C.
 */
export async function copyText(text: string, select: () => void): Promise<"copied" | "selected"> {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return "copied";
    }
  } catch {
    // Refused: fall through to selecting it.
  }
  select();
  return "selected";
}

/** Selects the whole text of an element that is not a form field (the .env block). */
export function selectContents(el: Element): void {
  const range = document.createRange();
  range.selectNodeContents(el);
  const selection = getSelection();
  selection?.removeAllRanges();
  selection?.addRange(range);
}

/** What the status line says after a copy. */
export function copiedMessage(what: string, how: "copied" | "selected"): string {
  return how === "copied" ? `Copied ${what}` : `The clipboard is not available here: ${what} is selected, press Ctrl+C (⌘C) to copy it`;
}
