import { CST, Lexer, type YAMLError } from "yaml";

/**
 * The one place to fix when the YAML parser gives up. Its errors often point past the cause (an
 * unclosed quote is reported where the file ends; a key indented too far, at the value of the key
 * above it) and one mistake gives several errors. This picks the error that comes first, moves it
 * to the character to change, and says how to change it.
 */
export interface RootSyntaxError {
  offset: number;
  message: string;
}

export function rootSyntaxError(text: string, errors: readonly YAMLError[]): RootSyntaxError {
  const tokens = lexed(text);
  const quote = unclosedQuote(tokens, errors);
  if (quote) return quote;
  const first = [...errors].sort((a, b) => a.pos[0] - b.pos[0])[0]!;
  const offset = first.pos[0];
  const lines = new Lines(text);
  switch (first.code) {
    case "BLOCK_AS_IMPLICIT_KEY":
    case "MULTILINE_IMPLICIT_KEY":
      return indentedTooFar(lines, offset) ?? parserSays(first);
    case "BAD_INDENT":
      if (/^All mapping items must start at the same column/.test(first.message)) return misaligned(lines, offset) ?? parserSays(first);
      if (/^Flow (sequence|map)/.test(first.message)) return unclosedBracket(tokens, offset) ?? parserSays(first);
      return parserSays(first);
    case "TAB_AS_INDENT":
      return { offset, message: "a tab indents this line, and YAML indents with spaces only; replace the tab with spaces" };
    case "MISSING_CHAR":
      if (/^Flow (sequence|map) must end/.test(first.message)) return unclosedBracket(tokens, offset) ?? parserSays(first);
      // A key indented less than the list item's keys, but more than the list's dash.
      if (/^Sequence item without - indicator/.test(first.message)) return misaligned(lines, offset) ?? parserSays(first);
      if (/^Missing , /.test(first.message)) {
        return { offset: endOfPrevious(text, offset), message: "a comma is missing after this value, before the next item; add ','" };
      }
      return parserSays(first);
    default:
      return parserSays(first);
  }
}

/** The parser's own words (first line), where it put them. */
function parserSays(e: YAMLError): RootSyntaxError {
  const first = e.message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "");
  return { offset: e.pos[0], message: `not valid YAML or JSON: ${first}` };
}

interface Token {
  offset: number;
  source: string;
  type: string | undefined;
}

/** The lexer's tokens with their offsets (its control tokens, not in the text, left out). */
function lexed(text: string): Token[] {
  const tokens: Token[] = [];
  let offset = 0;
  for (const source of new Lexer().lex(text)) {
    if (source === "" || !text.startsWith(source, offset)) continue;
    tokens.push({ offset, source, type: CST.tokenType(source) ?? undefined });
    offset += source.length;
  }
  return tokens;
}

/** A quoted value that runs over a line break and holds an error: its quote was never closed where meant. */
function unclosedQuote(tokens: Token[], errors: readonly YAMLError[]): RootSyntaxError | undefined {
  for (const t of tokens) {
    if (t.type !== "double-quoted-scalar" && t.type !== "single-quoted-scalar") continue;
    if (!t.source.includes("\n")) continue;
    const end = t.offset + t.source.length;
    if (!errors.some((e) => e.pos[0] >= t.offset && e.pos[0] <= end)) continue;
    const q = t.source[0]!;
    const closed = t.source.length > 1 && t.source.endsWith(q);
    const runs = closed ? "so it runs on over the lines after it" : "so it runs on to the end of the file";
    return { offset: t.offset, message: `this ${q}quoted${q} value is not closed on its line, ${runs}; add the closing ${q} where the value ends` };
  }
  return undefined;
}

/** The [ or { still open where the parser gave up. */
function unclosedBracket(tokens: Token[], at: number): RootSyntaxError | undefined {
  const open: Token[] = [];
  for (const t of tokens) {
    if (t.offset >= at) break;
    if (t.type === "flow-map-start" || t.type === "flow-seq-start") open.push(t);
    else if (t.type === "flow-map-end" || t.type === "flow-seq-end") open.pop();
  }
  const bracket = open.at(-1);
  if (!bracket) return undefined;
  const list = bracket.source === "[";
  return {
    offset: bracket.offset,
    message: list
      ? "this [ is never closed; add the ] after the list's last item"
      : "this { is never closed; add the } after the mapping's last entry",
  };
}

/** Where the value before `offset` ends (after it, past spaces, line breaks and comments). */
function endOfPrevious(text: string, offset: number): number {
  let i = offset;
  while (i > 0 && /\s/.test(text[i - 1]!)) i--;
  return i;
}

/**
 * `api_key: k1` then `  api_secret: s1` indented further: YAML reads the second line as more of
 * k1, then finds a key inside a value. The error is at k1; the line to fix is the next one.
 */
function indentedTooFar(lines: Lines, offset: number): RootSyntaxError | undefined {
  const line = lines.indexAt(offset);
  const above = lines.key(line);
  const next = lines.nextContent(line);
  if (next === undefined || !above) return undefined;
  const below = lines.key(next);
  if (!below || below.column <= above.column) return undefined;
  return {
    offset: lines.start(next) + below.column - 1,
    message: tooFar(below, above),
  };
}

function tooFar(key: { name: string }, above: { name: string; column: number }): string {
  return `'${key.name}' is indented further than '${above.name}' above it, so it reads as part of that value; indent it to column ${above.column} like '${above.name}', or nest it under a key that ends with ':'`;
}

/** A key at a column where no key of the lines above starts: between two levels of nesting. */
function misaligned(lines: Lines, offset: number): RootSyntaxError | undefined {
  const line = lines.indexAt(offset);
  const key = lines.key(line);
  if (!key) return undefined;
  type Level = { name: string; column: number; line: number };
  let deeper: Level | undefined;
  let shallower: Level | undefined;
  for (let i = line - 1; i >= 0 && !shallower; i--) {
    const k = lines.key(i);
    if (!k) continue;
    if (k.column === key.column) return undefined;
    if (k.column < key.column) shallower = { ...k, line: i + 1 };
    else if (!deeper || k.column < deeper.column) deeper = { ...k, line: i + 1 };
  }
  // Under a key that has its value on its line: indented as if nested, but there is nothing to nest in.
  if (!deeper && shallower?.line === line && !lines.endsWithColon(line - 1)) {
    return { offset: lines.start(line) + key.column - 1, message: tooFar(key, shallower) };
  }
  const levels = [deeper, shallower].filter((k) => k !== undefined).map((k) => `column ${k.column} ('${k.name}', line ${k.line})`);
  const between =
    levels.length === 2
      ? `, between the keys at ${levels.join(" and ")}`
      : levels.length === 1
        ? `, where no key above starts (next: ${levels[0]})`
        : "";
  return {
    offset: lines.start(line) + key.column - 1,
    message: `'${key.name}' starts at column ${key.column}${between}; indent it to the column of the keys it belongs with`,
  };
}

/** The text's lines, and the key each one starts (after any `- `), with its column (1-based). */
class Lines {
  private readonly starts: number[] = [0];
  private readonly texts: string[];
  constructor(text: string) {
    this.texts = text.split("\n");
    for (const t of this.texts.slice(0, -1)) this.starts.push(this.starts.at(-1)! + t.length + 1);
  }
  indexAt(offset: number): number {
    let i = 0;
    while (i + 1 < this.starts.length && this.starts[i + 1]! <= offset) i++;
    return i;
  }
  start(line: number): number {
    return this.starts[line]!;
  }
  nextContent(line: number): number | undefined {
    for (let i = line + 1; i < this.texts.length; i++) if (!/^\s*(#.*)?$/.test(this.texts[i]!)) return i;
    return undefined;
  }
  endsWithColon(line: number): boolean {
    return /:\s*(#.*)?$/.test(this.texts[line] ?? "");
  }
  key(line: number): { name: string; column: number } | undefined {
    const m = /^((?: *- +)* *)([^\s#:'"[\]{},-][^:#]*?|"[^"]*"|'[^']*') *:(?:\s|$)/.exec(this.texts[line] ?? "");
    return m ? { name: m[2]!.replace(/^["']|["']$/g, ""), column: m[1]!.length + 1 } : undefined;
  }
}
