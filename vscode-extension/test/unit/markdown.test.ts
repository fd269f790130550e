import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { escapeHtml, renderInline, renderMarkdown, safeHref } from "../../src/model/markdown";

/** No active content: no script or style tags, no event handlers, no javascript: or data: URLs. */
function assertInert(html: string): void {
  assert.doesNotMatch(html, /<\s*(script|style|iframe|object|embed|img|svg|math|link|meta|form|input)/i, html);
  assert.doesNotMatch(html, /<[^>]*\son\w+\s*=/i, html);
  assert.doesNotMatch(html, /href\s*=\s*"\s*(javascript|data|vbscript):/i, html);
}

describe("safe markdown", () => {
  const attacks = [
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(1)">',
    "[click](javascript:alert(1))",
    "[click](JaVaScRiPt:alert(1))",
    "[x](data:text/html;base64,PHNjcmlwdD4=)",
    '[x](https://ok.example/" onclick="alert(1))',
    "**<svg onload=alert(1)>**",
    "`<script>` and ```<b>```",
    "```html\n<script>alert(1)</script>\n```",
    "<https://a.example/<script>>",
    "| a | <b onmouseover=x> |\n|---|---|\n| <script> | c |",
    "> <iframe src=javascript:alert(1)>",
    "- <style>body{}</style>",
    "\u00000\u0000",
  ];
  for (const attack of attacks) {
    test(`inert: ${JSON.stringify(attack).slice(0, 50)}`, () => assertInert(renderMarkdown(attack)));
  }

  test("escapes HTML", () => {
    assert.equal(escapeHtml(`<a href="x">'&'</a>`), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
    assert.equal(renderMarkdown("a < b & c"), "<p>a &lt; b &amp; c</p>");
  });

  test("links: http, https, file and relative pass; other schemes lose their link", () => {
    assert.equal(safeHref("https://x.example/a"), "https://x.example/a");
    assert.equal(safeHref("file:///ws/a.py"), "file:///ws/a.py");
    assert.equal(safeHref("src/a.py"), "src/a.py");
    assert.equal(safeHref("javascript:alert(1)"), undefined);
    assert.equal(safeHref("//evil.example"), undefined);
    assert.equal(renderInline("[docs](https://x.example/d)"), '<a href="https://x.example/d">docs</a>');
    assert.equal(renderInline("[bad](javascript:x)"), "bad");
  });

  test("inline: code spans are literal, emphasis around them", () => {
    assert.equal(renderInline("use `a*b*c` **now**"), "use <code>a*b*c</code> <strong>now</strong>");
    assert.equal(renderInline("an *em* and ~~old~~"), "an <em>em</em> and <del>old</del>");
    assert.equal(renderInline("snake_case_name stays"), "snake_case_name stays");
  });

  test("blocks: headings, lists, code, quotes, rules, tables", () => {
    assert.equal(renderMarkdown("# Title\n\ntext"), "<h1>Title</h1><p>text</p>");
    assert.equal(renderMarkdown("- a\n- b"), "<ul><li>a</li><li>b</li></ul>");
    assert.equal(renderMarkdown("1. a\n2. b"), "<ol><li>a</li><li>b</li></ol>");
    assert.equal(renderMarkdown("- a\n  - b\n- c"), "<ul><li>a<ul><li>b</li></ul></li><li>c</li></ul>");
    assert.equal(renderMarkdown("```py\nx = 1\n```"), '<pre><code class="language-py">x = 1</code></pre>');
    assert.equal(renderMarkdown("> quoted"), "<blockquote><p>quoted</p></blockquote>");
    assert.equal(renderMarkdown("a\n\n---\n\nb"), "<p>a</p><hr><p>b</p>");
    assert.equal(
      renderMarkdown("| a | b |\n|---|:-:|\n| 1 | 2 |"),
      "<table><thead><tr><th>a</th><th>b</th></tr></thead><tbody><tr><td>1</td><td>2</td></tr></tbody></table>",
    );
    assert.equal(renderMarkdown("- [x] done\n- [ ] todo"), '<ul><li><span class="task done">☑</span> done</li><li><span class="task">☐</span> todo</li></ul>');
  });

  test("a code fence still streaming renders as code to the end", () => {
    assert.equal(renderMarkdown("Here:\n```ts\nconst a = 1;\nconst b"), '<p>Here:</p><pre><code class="language-ts">const a = 1;\nconst b</code></pre>');
  });

  test("paragraph lines join; two trailing spaces break", () => {
    assert.equal(renderMarkdown("one\ntwo  \nthree"), "<p>one\ntwo<br>three</p>");
  });
});
