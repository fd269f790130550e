// How the host posts a session's updates to the agent panel's webview (issue #18, V5).
//
// Every post crosses the browser's main thread, which the workbench and the panel share, several
// times: the extension host's message arrives on code-server's websocket (read as a blob, parsed),
// the workbench hands it to the webview's host frame, which hands it to the panel's frame (a
// structured clone at each hop), and the panel applies it. Each message costs that path whatever it
// holds, and a clone of an array of objects costs per object. So while updates stream in (a long
// load, a live turn), the host posts no more often than the panel redraws a streaming session
// anyway (`STREAM_REDRAW_MS` in src/webview/main.ts); what a post carries (the changed items of the
// run the page holds, as one JSON string that each hop copies as one block and only the panel
// parses) is src/model/panelFeed.ts.

/** The first updates after a quiet spell wait this long for company (one frame at 60 Hz). */
export const BATCH_MS = 16;
/** While updates keep coming, posts are at least this far apart: the panel redraws a streaming
 * session at most this often, so more posts would only cost the main thread more messages. */
export const STREAM_POST_MS = 48;
/** How long updates that just arrived wait before they are posted, given when the last post went
 * (both in ms of the same clock): BATCH_MS after a quiet spell, else until STREAM_POST_MS after the
 * last post. */
export function postDelay(now: number, lastPost: number): number {
  const since = now - lastPost;
  if (since >= STREAM_POST_MS) return BATCH_MS;
  return Math.max(BATCH_MS, STREAM_POST_MS - since);
}
