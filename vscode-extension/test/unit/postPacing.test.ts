import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { BATCH_MS, postDelay, STREAM_POST_MS } from "../../src/model/postPacing";

describe("posting updates to the panel", () => {
  test("updates after a quiet spell wait one batch", () => {
    assert.equal(postDelay(1000, Number.NEGATIVE_INFINITY), BATCH_MS);
    assert.equal(postDelay(1000, 1000 - STREAM_POST_MS), BATCH_MS);
    assert.equal(postDelay(1000, 1000 - 500), BATCH_MS);
  });

  test("while updates stream in, posts are STREAM_POST_MS apart", () => {
    assert.equal(postDelay(1000, 1000), STREAM_POST_MS);
    assert.equal(postDelay(1010, 1000), STREAM_POST_MS - 10);
    // Never sooner than a batch: the last post was nearly STREAM_POST_MS ago.
    assert.equal(postDelay(1000 + STREAM_POST_MS - 1, 1000), BATCH_MS);
  });
});
