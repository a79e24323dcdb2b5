import { appendFileSync } from "node:fs";

/**
 * One JSON line per event. Fields are chosen so that no secret is ever logged (no header, no body,
 * no token); as a second line of defence every line is cleaned of the configured secrets and of
 * anything shaped like a JWT before it is written, so a careless message cannot leak one either.
 */
const JWT = /eyJ[\w-]*\.[\w-]+\.[\w-]*/g;

/**
 * @param {{ secrets: () => Array<string | undefined>, write?: (line: string) => void, file?: string }} options
 */
export function createLogger({ secrets, write = (line) => process.stdout.write(line), file }) {
  const emit = (level, message, fields = {}) => {
    let line = JSON.stringify({ time: new Date().toISOString(), level, message, ...fields });
    for (const secret of secrets()) {
      if (secret && secret.length >= 4) line = line.split(secret).join("[redacted]");
    }
    line = `${line.replace(JWT, "[redacted jwt]")}\n`;
    write(line);
    if (file) appendFileSync(file, line);
  };
  return {
    info: (message, fields) => emit("info", message, fields),
    warn: (message, fields) => emit("warn", message, fields),
    error: (message, fields) => emit("error", message, fields),
  };
}
