/**
 * How deep a YAML or JSON text nests, read in one pass over its characters before the YAML parser
 * sees it. The parser recurses once per level: a deep enough file cost it seconds and ran it out of
 * stack, and twice in one process out of memory (docs/reliability.md, "source files: depth and
 * size"). So a text is refused here when it plainly nests past `limit`; what passes is parsed, and
 * the parsed document is then held to the exact limit (tooDeepOffset in yaml-syntax.ts).
 *
 * The count never exceeds the real depth by more than the few levels a multi-line scalar's
 * continuation lines can add (they are indented like children): flow brackets are counted only
 * where a flow collection can start or inside one; quoted scalars, comments and block scalars
 * (`|`, `>`) are skipped, and a block level is a line indented past the lines it is under, or a
 * `- ` / `? ` indicator before the line's content. So `limit` must sit well above the allowed
 * depth, and below the depth the parser survives.
 */
export function nestingPastLimit(text: string, limit: number): number | undefined {
  // Columns of the open block levels, innermost last; and the open flow collections.
  const indents: number[] = [];
  let flow = 0;
  let i = 0;
  const n = text.length;
  while (i < n) {
    // One line of block context (flow === 0) starts here.
    let col = 0;
    while (i < n && text[i] === " ") {
      i++;
      col++;
    }
    if (i >= n) break;
    const c = text[i]!;
    if (c === "\n" || c === "\r" || c === "#") {
      i = lineEnd(text, i) + 1;
      continue;
    }
    while (indents.length > 0 && indents[indents.length - 1]! >= col) indents.pop();
    indents.push(col);
    // Compact indicators (`- - a`, `? x`): each opens a level at its own column.
    while ((text[i] === "-" || text[i] === "?") && (text[i + 1] === " " || text[i + 1] === "\n" || i + 1 >= n)) {
      i += 2;
      col += 2;
      while (text[i] === " ") {
        i++;
        col++;
      }
      indents.push(col);
    }
    if (indents.length + flow > limit) return i;
    // The rest of the line. `token`: a scalar or a flow collection may start here (not inside a
    // plain scalar, where quotes and brackets are only text).
    let token = true;
    let end = lineEnd(text, i);
    while (i < end) {
      const ch = text[i]!;
      if (token && (ch === '"' || ch === "'")) {
        i = quotedEnd(text, i);
        // A quoted scalar may span lines: the line ends where the quote does.
        if (i > end) end = lineEnd(text, i);
        token = false;
      } else if (ch === "#" && (text[i - 1] === " " || text[i - 1] === "\t" || text[i - 1] === "\n")) {
        i = end;
      } else if (token && (ch === "[" || ch === "{")) {
        flow++;
        if (indents.length + flow > limit) return i;
        i++;
      } else if (token && flow === 0 && (ch === "|" || ch === ">")) {
        i = blockScalarEnd(text, end, col);
        end = i;
      } else {
        if (flow > 0 && (ch === "]" || ch === "}")) flow--;
        if ((flow > 0 && ch === ",") || (ch === ":" && (flow > 0 || text[i + 1] === " " || i + 1 === end))) token = true;
        else if (ch !== " " && ch !== "\t" && ch !== "\r" && ch !== "\n") token = false;
        i++;
      }
      // A flow collection goes on over lines: the next line is read as part of it.
      if (i >= end && flow > 0 && end < n) end = lineEnd(text, end + 1);
    }
    i = end + 1;
  }
  return undefined;
}

function lineEnd(text: string, from: number): number {
  const at = text.indexOf("\n", from);
  return at < 0 ? text.length : at;
}

/** Just past the closing quote ('' escapes a single quote, \ escapes in double quotes), or the end. */
function quotedEnd(text: string, start: number): number {
  const quote = text[start];
  let i = start + 1;
  while (i < text.length) {
    const ch = text[i];
    if (quote === '"' && ch === "\\") i += 2;
    else if (ch === quote) {
      if (quote === "'" && text[i + 1] === "'") i += 2;
      else return i + 1;
    } else i++;
  }
  return text.length;
}

/** The end of a block scalar's last line: its lines are those blank or indented past `col`. */
function blockScalarEnd(text: string, headerEnd: number, col: number): number {
  let end = headerEnd;
  while (end < text.length) {
    let i = end + 1;
    let indent = 0;
    while (text[i] === " ") {
      i++;
      indent++;
    }
    const blank = i >= text.length || text[i] === "\n" || text[i] === "\r";
    if (!blank && indent <= col) return end;
    end = lineEnd(text, i);
  }
  return end;
}
