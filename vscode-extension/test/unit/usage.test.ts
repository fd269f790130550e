import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { tokensText, UsageWarnings, usageFraction, usageText } from "../../src/model/usage";

describe("the context meter", () => {
  test("words and share", () => {
    assert.equal(usageText({ used: 1200, size: 200000, cost: { amount: 0.01, currency: "USD" } }), "context 1,200/200,000 (1%) · 0.01 USD");
    assert.equal(usageText({ used: 500, size: 1000 }), "context 500/1,000 (50%)");
    assert.equal(usageText({ used: 1, size: 0 }), undefined);
    assert.equal(usageFraction(undefined), undefined);
  });

  test("warns once per session at 80%, again after it drops", () => {
    const warnings = new UsageWarnings();
    const at = (used: number, session = "s1"): boolean => warnings.crossed(session, { used, size: 1000 });
    assert.deepEqual([at(500), at(800), at(900), at(850, "s2"), at(100), at(810)], [false, true, false, true, false, true]);
  });
});

describe("a turn's token counts", () => {
  test("words", () => {
    assert.equal(tokensText({ totalTokens: 1234, inputTokens: 1000, outputTokens: 234 }), "1,234 tokens (1,000 in, 234 out)");
    assert.equal(tokensText({ totalTokens: 5 }), "5 tokens");
    assert.equal(tokensText(undefined), undefined);
    assert.equal(tokensText({ inputTokens: 1 }), undefined);
  });
});
