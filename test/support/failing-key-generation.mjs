// Preloaded into a CLI process by a test (NODE_OPTIONS=--import=<this file>): every Web Crypto key
// generation fails, as it would on a platform whose crypto is broken or locked down. The failure is
// the platform's, so the CLI's own handling of it is what the test sees.
globalThis.crypto.subtle.generateKey = async () => {
  throw new Error("key generation is broken on this machine (injected by the test)");
};
