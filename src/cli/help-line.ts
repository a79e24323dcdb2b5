/**
 * The line under a usage error: where the options of the command being run are listed, its own
 * `--help` (serve's 40 flags are not in the program's), or the program's when no command was named.
 */
export function helpLine(command: string | undefined): string {
  return `Run 'merchant-sandbox ${command === undefined ? "" : `${command} `}--help' for the options.`;
}
