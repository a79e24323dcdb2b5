/**
 * Brings a journal row into view and focus, and highlights it for a moment: the target of the
 * findings' evidence links and of the timeline's marks. Done by hand, not by the `#row-…` hash,
 * because the hash holds the page's route.
 */
export function showRow(requestId: string): boolean {
  const row = document.getElementById(`row-${requestId}`);
  if (!row) return false;
  row.scrollIntoView({ block: "center", behavior: matchMedia("(prefers-reduced-motion: reduce)").matches ? "auto" : "smooth" });
  row.focus({ preventScroll: true });
  row.classList.add("highlight");
  setTimeout(() => row.classList.remove("highlight"), 2500);
  return true;
}
