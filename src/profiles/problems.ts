import { formatProblem, type SourceProblem } from "../core/source/problems.js";

/**
 * A profile that cannot be used: located problems of its file (`file:line:column: path: message`),
 * or one line about the name that was asked for. Nothing of such a profile is used.
 */
export class ProfileLoadError extends Error {
  readonly code = "invalid_profile";
  constructor(
    readonly problems: SourceProblem[],
    message = problems.map(formatProblem).join("\n"),
  ) {
    super(message);
    this.name = "ProfileLoadError";
  }
}
