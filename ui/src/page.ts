import type { ControlApi } from "./api";

/** What every view gets from the shell: the control-plane client and the status line. */
export interface Page {
  api: ControlApi;
  /** Says a result in the status line (role=status). */
  announce: (message: string, kind?: "ok" | "error") => void;
  /** Says why a call failed; when it lacked the admin token, the shell also asks for one. */
  fail: (error: unknown) => void;
}
