// A small markdown renderer for agent messages that cannot produce active content: every piece of
// source text is HTML-escaped before any tag is added, the only tags are the fixed ones below, the
// only attributes are `href` (http, https, file, or a relative path, escaped) and `class`, and
// nothing ever yields a `<script>`, an event handler or a `javascript:` URL. The webview's CSP
// forbids inline script as a second line of defence.
//
// Covers what agents write: headings, paragraphs, fenced and indented code, lists (nested by
// indentation), block quotes, rules, tables, emphasis, inline code, links and autolinks. An
// unterminated code fence (a message still streaming) renders as code up to the end.

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

/** A link target that is safe to put in `href`, or undefined. */
export function safeHref(raw: string): string | undefined {
  const href = raw.trim();
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(href);
  if (scheme !== null) {
    const name = (scheme[1] ?? "").toLowerCase();
    return name === "http" || name === "https" || name === "file" || name === "mailto" ? href : undefined;
  }
  // No scheme: a relative path or an anchor. Reject protocol-relative URLs.
  return href.startsWith("//") ? undefined : href;
}

const PLACEHOLDER = "\u0000";

/** Inline markdown of one block of text, escaped. */
export function renderInline(source: string): string {
  // Code spans first: their content is literal. They are replaced by placeholders so emphasis
  // rules cannot reach inside them.
  const stash: string[] = [];
  const keep = (html: string): string => {
    stash.push(html);
    return `${PLACEHOLDER}${stash.length - 1}${PLACEHOLDER}`;
  };
  let text = source.replace(PLACEHOLDER_RE_GLOBAL, "");
  text = text.replace(/(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g, (_m, _ticks: string, code: string) =>
    keep(`<code>${escapeHtml(code.trim() === "" ? code : code.replace(/^ (.*) $/s, "$1"))}</code>`),
  );
  // Links [label](href) and autolinks <https://…>.
  text = text.replace(/\[([^\]\n]+)\]\(([^()\s]+(?:\([^()\s]*\))?[^()\s]*)(?:\s+"[^"]*")?\)/g, (_m, label: string, href: string) => {
    const safe = safeHref(href);
    const inner = renderEmphasis(escapeHtml(label));
    return safe === undefined ? keep(inner) : keep(`<a href="${escapeHtml(safe)}">${inner}</a>`);
  });
  text = text.replace(/<((?:https?|file):\/\/[^\s<>]+)>/g, (_m, href: string) => keep(`<a href="${escapeHtml(href)}">${escapeHtml(href)}</a>`));
  let html = renderEmphasis(escapeHtml(text));
  html = html.replace(/ {2,}\n|\\\n/g, "<br>");
  return html.replace(PLACEHOLDER_RE_GLOBAL, (_m, index: string) => stash[Number(index)] ?? "");
}

const PLACEHOLDER_RE_GLOBAL = new RegExp(`${PLACEHOLDER}(\\d+)${PLACEHOLDER}|${PLACEHOLDER}`, "g");

/** Bold, italic and strike-through on already escaped text. */
function renderEmphasis(html: string): string {
  return html
    .replace(/\*\*(?=\S)([\s\S]*?\S)\*\*/g, "<strong>$1</strong>")
    .replace(/__(?=\S)([\s\S]*?\S)__(?!\w)/g, "<strong>$1</strong>")
    .replace(/(^|[^*\w])\*(?=\S)([^*]*?\S)\*(?!\*)/g, "$1<em>$2</em>")
    .replace(/(^|[^_\w])_(?=\S)([^_]*?\S)_(?!\w)/g, "$1<em>$2</em>")
    .replace(/~~(?=\S)([\s\S]*?\S)~~/g, "<del>$1</del>");
}

type ListFrame = { ordered: boolean; indent: number };

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)[^`]*$/;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const RULE = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/;
const LIST_ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const QUOTE = /^ {0,3}>\s?(.*)$/;
const TABLE_SEPARATOR = /^\s*\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?\s*$/;

function splitRow(line: string): string[] {
  let row = line.trim();
  if (row.startsWith("|")) row = row.slice(1);
  if (row.endsWith("|") && !row.endsWith("\\|")) row = row.slice(0, -1);
  return row.split(/(?<!\\)\|/).map((cell) => cell.trim().replace(/\\\|/g, "|"));
}

/** Renders markdown to HTML in which no piece of the source is active. */
export function renderMarkdown(source: string): string {
  const lines = source.replace(/\r\n?/g, "\n").split("\n");
  const out: string[] = [];
  const lists: ListFrame[] = [];
  let paragraph: string[] = [];

  const flushParagraph = (): void => {
    if (paragraph.length > 0) {
      out.push(`<p>${renderInline(paragraph.join("\n"))}</p>`);
      paragraph = [];
    }
  };
  const closeLists = (toDepth = 0): void => {
    while (lists.length > toDepth) {
      const frame = lists.pop();
      out.push(frame?.ordered === true ? "</li></ol>" : "</li></ul>");
    }
  };

  let i = 0;
  while (i < lines.length) {
    const line = lines[i] ?? "";
    const fence = FENCE.exec(line);
    if (fence !== null) {
      flushParagraph();
      closeLists();
      const marker = fence[1] ?? "```";
      const language = (fence[2] ?? "").replace(/[^\w+#.-]/g, "");
      const code: string[] = [];
      i += 1;
      while (i < lines.length && !new RegExp(`^ {0,3}${marker[0] === "`" ? "`" : "~"}{${marker.length},}\\s*$`).test(lines[i] ?? "")) {
        code.push(lines[i] ?? "");
        i += 1;
      }
      i += 1; // the closing fence (or past the end while streaming)
      const cls = language === "" ? "" : ` class="language-${escapeHtml(language)}"`;
      out.push(`<pre><code${cls}>${escapeHtml(code.join("\n"))}</code></pre>`);
      continue;
    }
    if (line.trim() === "") {
      flushParagraph();
      // A blank line inside a list keeps the list open if the next line continues it.
      const next = lines[i + 1] ?? "";
      if (lists.length > 0 && !LIST_ITEM.test(next) && !/^\s{2,}\S/.test(next)) closeLists();
      i += 1;
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading !== null) {
      flushParagraph();
      closeLists();
      const level = (heading[1] ?? "#").length;
      out.push(`<h${level}>${renderInline(heading[2] ?? "")}</h${level}>`);
      i += 1;
      continue;
    }
    if (RULE.test(line) && paragraph.length === 0) {
      closeLists();
      out.push("<hr>");
      i += 1;
      continue;
    }
    const item = LIST_ITEM.exec(line);
    if (item !== null) {
      flushParagraph();
      const indent = (item[1] ?? "").length;
      const ordered = /\d/.test(item[2] ?? "");
      while (lists.length > 0 && (lists[lists.length - 1]?.indent ?? 0) > indent) closeLists(lists.length - 1);
      const top = lists[lists.length - 1];
      if (top === undefined || indent > top.indent) {
        const start = ordered ? Number.parseInt(item[2] ?? "1", 10) : 1;
        out.push(ordered ? (start !== 1 ? `<ol start="${start}"><li>` : "<ol><li>") : "<ul><li>");
        lists.push({ ordered, indent });
      } else if (top.ordered !== ordered) {
        closeLists(lists.length - 1);
        out.push(ordered ? "<ol><li>" : "<ul><li>");
        lists.push({ ordered, indent });
      } else {
        out.push("</li><li>");
      }
      const task = /^\[([ xX])\]\s+(.*)$/.exec(item[3] ?? "");
      if (task !== null) {
        const done = task[1] !== " ";
        out.push(`<span class="task${done ? " done" : ""}">${done ? "☑" : "☐"}</span> ${renderInline(task[2] ?? "")}`);
      } else {
        out.push(renderInline(item[3] ?? ""));
      }
      i += 1;
      continue;
    }
    if (lists.length > 0 && /^\s+\S/.test(line) && paragraph.length === 0) {
      // A continuation line of the current list item.
      out.push(` ${renderInline(line.trim())}`);
      i += 1;
      continue;
    }
    const quote = QUOTE.exec(line);
    if (quote !== null) {
      flushParagraph();
      closeLists();
      const quoted: string[] = [];
      while (i < lines.length) {
        const q = QUOTE.exec(lines[i] ?? "");
        if (q === null) break;
        quoted.push(q[1] ?? "");
        i += 1;
      }
      out.push(`<blockquote>${renderMarkdown(quoted.join("\n"))}</blockquote>`);
      continue;
    }
    if (line.includes("|") && TABLE_SEPARATOR.test(lines[i + 1] ?? "") && paragraph.length === 0) {
      closeLists();
      const header = splitRow(line);
      const rows: string[][] = [];
      i += 2;
      while (i < lines.length && (lines[i] ?? "").includes("|") && (lines[i] ?? "").trim() !== "") {
        rows.push(splitRow(lines[i] ?? ""));
        i += 1;
      }
      const head = header.map((cell) => `<th>${renderInline(cell)}</th>`).join("");
      const body = rows.map((row) => `<tr>${header.map((_h, c) => `<td>${renderInline(row[c] ?? "")}</td>`).join("")}</tr>`).join("");
      out.push(`<table><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`);
      continue;
    }
    if (/^ {4,}\S/.test(line) && paragraph.length === 0 && lists.length === 0) {
      const code: string[] = [];
      while (i < lines.length && (/^ {4,}/.test(lines[i] ?? "") || (lines[i] ?? "").trim() === "")) {
        code.push((lines[i] ?? "").slice(4));
        i += 1;
      }
      while (code.length > 0 && (code[code.length - 1] ?? "").trim() === "") code.pop();
      out.push(`<pre><code>${escapeHtml(code.join("\n"))}</code></pre>`);
      continue;
    }
    if (lists.length > 0 && paragraph.length === 0) closeLists();
    paragraph.push(line);
    i += 1;
  }
  flushParagraph();
  closeLists();
  return out.join("");
}
