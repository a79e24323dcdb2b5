import { portOwner } from "./port-owner.js";

/**
 * The one line `serve` prints when it cannot listen: what is wrong with the address, and what to do
 * about it. A port in use names the process that holds it when it can be found.
 */
export function listenErrorLine(e: NodeJS.ErrnoException, host: string, port: number): string {
  const address = `${host.includes(":") ? `[${host}]` : host}:${port}`;
  switch (e.code) {
    case "EADDRINUSE": {
      const owner = portOwner(port);
      const who = owner ? `process ${owner.pid} (${owner.name}) listens on it` : "another process listens on it";
      return `cannot listen on ${address}: the port is already in use, ${who}; stop that process, pass another --port, or --port 0 for any free port`;
    }
    case "EACCES":
      return `cannot listen on ${address}: permission denied (ports below 1024 need privileges); pass --port 1024 or above, or --port 0 for any free port`;
    case "EADDRNOTAVAIL":
      return `cannot listen on ${address}: ${host} is not an address of this machine; pass --host 127.0.0.1 (this machine only) or --host 0.0.0.0 (every interface)`;
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return `cannot listen on ${address}: the host name ${host} does not resolve; pass an IP address such as --host 127.0.0.1`;
    default:
      return `cannot listen on ${address}: ${e.code ?? e.message}`;
  }
}
