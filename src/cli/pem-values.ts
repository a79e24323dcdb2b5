/**
 * `--signing-key "$(cat key.pem)"`: the PEM starts with "-----BEGIN", which yargs reads as flags
 * rather than as the flag's value (only `--signing-key=<pem>` worked). A flag followed by an
 * argument that starts with a PEM boundary's five dashes is joined into `--flag=<value>` before
 * parsing: no flag name starts with dashes after its own two, so nothing else is changed.
 */
export function joinPemValues(args: readonly string[]): string[] {
  const joined: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const next = args[i + 1];
    if (/^--[a-z][a-z0-9-]*$/.test(arg) && next?.startsWith("-----")) {
      joined.push(`${arg}=${next}`);
      i++;
    } else joined.push(arg);
  }
  return joined;
}
