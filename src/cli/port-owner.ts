import { readdirSync, readFileSync, readlinkSync } from "node:fs";

/** A process that listens on a TCP port: its id and its name (`/proc/<pid>/comm`). */
export interface PortOwner {
  pid: number;
  name: string;
}

/**
 * The process listening on TCP `port`, found as `ss -ltnp` would on Linux: the listening socket's
 * inode in /proc/net/tcp or tcp6, then the process holding a descriptor on `socket:[inode]`. Only
 * the processes this user may look into are searched; undefined when none is found, off Linux, or
 * when anything cannot be read (the caller then says less, never fails).
 */
export function portOwner(port: number, procDir = "/proc"): PortOwner | undefined {
  try {
    const inodes = listeningInodes(port, procDir);
    if (inodes.size === 0) return undefined;
    for (const entry of readdirSync(procDir)) {
      if (!/^\d+$/.test(entry)) continue;
      if (!holdsSocket(`${procDir}/${entry}/fd`, inodes)) continue;
      const name = readFileSync(`${procDir}/${entry}/comm`, "utf8").trim();
      return { pid: Number(entry), name };
    }
  } catch {
    // No /proc (macOS, Windows) or not allowed to read it: the port is still in use, owner unknown.
  }
  return undefined;
}

/** TCP state 0A is LISTEN; the local address is `hex-ip:hex-port`, the inode the tenth column. */
function listeningInodes(port: number, procDir: string): Set<string> {
  const inodes = new Set<string>();
  for (const table of ["tcp", "tcp6"]) {
    let text: string;
    try {
      text = readFileSync(`${procDir}/net/${table}`, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 10 || cols[3] !== "0A") continue;
      if (Number.parseInt(cols[1]!.split(":")[1]!, 16) === port && cols[9] !== "0") inodes.add(cols[9]!);
    }
  }
  return inodes;
}

function holdsSocket(fdDir: string, inodes: Set<string>): boolean {
  let fds: string[];
  try {
    fds = readdirSync(fdDir);
  } catch {
    return false; // another user's process
  }
  for (const fd of fds) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`${fdDir}/${fd}`));
      if (m && inodes.has(m[1]!)) return true;
    } catch {
      // closed meanwhile
    }
  }
  return false;
}
