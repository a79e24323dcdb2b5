/**
 * One finding of the integration report: what the integration did wrong. It has a stable code, a
 * severity (`error` fails a CI gate), a message that says how to fix it, and the ids of the
 * requests that show it. Its own module, below both the checks and report.ts that lists them, so
 * neither has to import the other for the type.
 */
export interface Finding {
  code: string;
  severity: "error" | "warning" | "info";
  message: string;
  evidence: string[];
}
