import { createServer } from "node:net";

/**
 * A port free on loopback now: the kernel's pick for port 0, let go at once for the program the
 * test starts on it (or for a test that wants an address where nothing answers).
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}
