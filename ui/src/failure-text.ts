import { ControlError } from "./api";

/**
 * What the status line says when a panel's call failed: the control plane's own detail for a
 * refusal (it says what was wrong and how to fix it), or why the sandbox could not be reached.
 */
export function failureText(error: unknown): string {
  if (error instanceof ControlError) return error.message;
  const why = error instanceof Error ? error.message : String(error);
  return `The sandbox could not be reached (${why}); is it still running?`;
}
