/**
 * The start warning of a control plane open to the network (bound beyond loopback, no admin
 * token). Its advice depends on where the sandbox runs: on a machine, bind 127.0.0.1; in a
 * container, loopback is unreachable through a published port, so binding 127.0.0.1 would break
 * `-p`: the port is published on the host's loopback instead (`-p 127.0.0.1:4010:4010`).
 */
export function openControlPlaneWarning(host: string, port: number, container: boolean): string {
  const risk = `listening on ${host} with no --admin-token: anyone who can reach this address can reset the sandbox and read every session's credentials`;
  if (!container) return `${risk}; set --admin-token (MERCHANT_SANDBOX_ADMIN_TOKEN), or bind 127.0.0.1`;
  return `${risk}; in a container, publish the port on this machine's loopback only (docker run -p 127.0.0.1:${port}:${port}), or set --admin-token (MERCHANT_SANDBOX_ADMIN_TOKEN)`;
}

/**
 * Whether the process runs in a container, as the systemd container interface marks it: the
 * `container` environment variable (podman sets it; the image's Dockerfile sets `container=docker`).
 * Files such as /.dockerenv are not read: they are not there under every runtime, and a test
 * could not take them away.
 */
export function inContainer(env: NodeJS.ProcessEnv): boolean {
  return (env.container ?? "") !== "";
}
