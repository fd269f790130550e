// One agent terminal as VS Code shows it: output since the last reset is kept (bounded) and replayed
// when a pseudoterminal opens (VS Code drops what is written before `open`, and a terminal the user
// closed can be shown again); lone `\n` become `\r\n` (xterm does not return the carriage by itself;
// pty output already has `\r\n`); `reset` clears the screen; the exit is shown once.
//
// Nothing is written before the terminal's dimensions are known (VS Code passes them to `open`, or
// later to `setDimensions` when the panel was never shown), so the first lines are laid out at the
// pane's real width. Output goes out in slices of at most `slice` characters, one slice per tick: a
// 1.7 MB notification is never one write that the workbench's terminal parses in one go while the
// user types. Order is kept: the exit line goes through the same queue, after the last output (and,
// with `settle`, after output that arrives just behind the exit).
// What is trimmed is said: the replay of a terminal whose kept output passed its bound starts with a
// line saying how much is not kept, and the exit line says when the output had more lines than the
// pane's scrollback (`terminal.integrated.scrollback`) holds.

/** Clears screen and scrollback and homes the cursor (xterm.js honours all three). */
export const CLEAR_SEQUENCE = "\x1b[0m\x1b[2J\x1b[3J\x1b[H";

/** Characters written to the pseudoterminal per tick. */
export const SLICE_CHARS = 64 * 1024;

/**
 * How fast agent terminals write, shared by all of them (they share the browser's main thread).
 * While nobody types, big slices close together: a long output shows at full speed (faster than
 * VS Code's own terminal with `cat`). While keys arrive (the panel's prompt, an editor) the slices
 * shrink and spread out, so xterm.js parses at most one small slice between two keys and a key waits
 * for little more than a frame; throughput is traded for it. The typing figures are a measured
 * balance (bench V2 is timed while typing, V3 is the keys' latency): at load 14-19 on 2 cores,
 * 16k slices with a 48k window gave keys p99 53 ms but the stream at 1.95x `cat`'s time; 24k with
 * 96k gave 87 ms (cat's own p99 81 ms) and 1.12x.
 *
 * A Pseudoterminal has no flow control: what is written goes to the browser at once, and a browser
 * slower than the writes (a loaded machine) queues it, so keys wait behind all of it. With a `probe`
 * (the agent panel: a message to its page answered in that page's next animation frame, the same
 * channel as the terminal's output, so the answer comes after the output before it was taken) at
 * most `window` (or `typingWindow`) characters are in flight: the rate follows what the browser
 * draws. Without a visible panel the probe answers at once (the timer pace alone).
 */
export type PaceOptions = {
  /** Characters per tick and milliseconds between ticks, when nobody types. */
  slice: number;
  pause: number;
  /** The same while keys arrive. */
  typingSlice: number;
  typingPause: number;
  /** A key this recent (milliseconds) means the user is typing. */
  typingMs: number;
  /** Characters written and not yet acknowledged by a probe, at most (nobody typing / typing). */
  window: number;
  typingWindow: number;
};

export const PACE: PaceOptions = {
  slice: SLICE_CHARS,
  pause: 4,
  typingSlice: 24 * 1024,
  typingPause: 6,
  typingMs: 600,
  window: 1024 * 1024,
  typingWindow: 96 * 1024,
};

/** Resolves once the browser has taken what was written before it was called. */
export type Probe = () => Promise<void>;

/** Runs `work` after `ms` milliseconds (setTimeout in the extension; a queue in the tests). */
export type Timer = (work: () => void, ms: number) => void;

export class Pacer {
  private lastKey = Number.NEGATIVE_INFINITY;
  /** Characters written since the last acknowledged probe was sent. */
  private inflight = 0;
  private probing = false;
  /** Ticks waiting for the browser to take what is in flight. */
  private waiting: (() => void)[] = [];
  /** Set by the agent panel while it can answer. */
  probe: Probe | undefined;

  constructor(
    private readonly now: () => number = Date.now,
    readonly options: PaceOptions = PACE,
    private readonly timer: Timer = (work, ms) => setTimeout(work, ms),
  ) {}

  /** The user pressed a key (or changed a document by typing). */
  key(): void {
    this.lastKey = this.now();
  }

  get typing(): boolean {
    return this.now() - this.lastKey < this.options.typingMs;
  }

  /** Characters written and not yet acknowledged. */
  get inFlight(): number {
    return this.inflight;
  }

  /** Characters the next write may have. */
  slice(): number {
    return this.typing ? this.options.typingSlice : this.options.slice;
  }

  /** Milliseconds until the next write. */
  pause(): number {
    return this.typing ? this.options.typingPause : this.options.pause;
  }

  /** `count` characters went to the terminal: a probe follows them. */
  wrote(count: number): void {
    this.inflight += count;
    this.sendProbe();
  }

  /** A terminal's next slice: after the pause, once the browser has taken enough of what is in flight. */
  tick(work: () => void): void {
    this.timer(() => {
      if (this.open()) work();
      else this.waiting.push(work);
    }, this.pause());
  }

  private open(): boolean {
    return this.inflight < (this.typing ? this.options.typingWindow : this.options.window);
  }

  private sendProbe(): void {
    const probe = this.probe;
    if (this.probing || this.inflight === 0) return;
    if (probe === undefined) {
      this.acknowledged(this.inflight);
      return;
    }
    this.probing = true;
    const covered = this.inflight;
    const done = (): void => {
      this.probing = false;
      this.acknowledged(covered);
      this.sendProbe();
    };
    probe().then(done, done);
  }

  private acknowledged(count: number): void {
    this.inflight = Math.max(0, this.inflight - count);
    while (this.waiting.length > 0 && this.open()) this.waiting.shift()?.();
  }
}

/** Runs `work` later (a timer in the extension; a queue in the tests). */
export type Tick = (work: () => void) => void;

export type TerminalTextOptions = {
  /** Characters kept for a replay (the `acpls.terminal.scrollbackBytes` setting). */
  limit?: number;
  /** Characters written per tick (asked before each write when a function: a Pacer's). */
  slice?: number | (() => number);
  /** Schedules the next slice. */
  tick?: Tick;
  /** Lines the pane keeps (`terminal.integrated.scrollback`), to say when output passed it. */
  scrollbackLines?: number;
  /**
   * When given, the exit line waits for one `settle` tick in which no output came: output that
   * reaches the extension just after the exit (same server flush) still goes above the exit line.
   */
  settle?: Tick;
};

const dim = (text: string): string => `\x1b[2m${text}\x1b[0m`;

export class TerminalText {
  /** Everything shown since the last reset (bounded), replayed whenever a terminal opens on it. */
  private history: string[] = [];
  private historyLength = 0;
  /** Characters of output since the last reset that are no longer kept. */
  private dropped = 0;
  /** Line ends written since the last reset. */
  private lines = 0;
  private lastWasCR = false;
  private opened = false;
  private sized = false;
  private exitShown = false;
  /** Text waiting to be written, oldest first; `queueAt` characters of the first are written. */
  private queue: string[] = [];
  private queueAt = 0;
  private ticking = false;
  private readonly limit: number;
  private readonly slice: () => number;
  private readonly tick: Tick;
  private readonly scrollbackLines: number | undefined;
  private readonly settle: Tick | undefined;
  /** The exit, waiting for output to settle. */
  private exitPending: { exitCode: number | undefined; signal: string | undefined } | undefined;
  private settling = false;
  private outputWhileSettling = false;

  /** `write` is where text goes while the terminal is open. */
  constructor(
    private readonly write: (text: string) => void,
    options: TerminalTextOptions | number = {},
  ) {
    const o = typeof options === "number" ? { limit: options } : options;
    this.limit = o.limit ?? 4 * 1024 * 1024;
    const slice = o.slice ?? SLICE_CHARS;
    this.slice = typeof slice === "number" ? () => Math.max(2, slice) : () => Math.max(2, slice());
    this.tick = o.tick ?? ((work) => setTimeout(work, 0));
    this.scrollbackLines = o.scrollbackLines;
    this.settle = o.settle;
  }

  get isOpen(): boolean {
    return this.opened;
  }

  /** What a terminal opened now would show (the kept output, without the trim note). */
  get shown(): string {
    return this.history.join("");
  }

  /** Characters of output since the last reset that a replay no longer has. */
  get trimmed(): number {
    return this.dropped;
  }

  /** Characters still waiting to be written to the open terminal. */
  get backlog(): number {
    let n = 0;
    for (const text of this.queue) n += text.length;
    return n - this.queueAt;
  }

  /** Normalises line ends of one chunk, remembering a `\r` at its end for the next chunk. */
  normalise(text: string): string {
    let result = "";
    let from = 0;
    for (let i = 0; i < text.length; i++) {
      if (text.charCodeAt(i) === 10 && !(i === 0 ? this.lastWasCR : text.charCodeAt(i - 1) === 13)) {
        result += `${text.slice(from, i)}\r`;
        from = i;
      }
    }
    result += text.slice(from);
    if (text.length > 0) this.lastWasCR = text.charCodeAt(text.length - 1) === 13;
    return result;
  }

  /** `dropped` (with `reset`): bytes before `text` that acpls no longer keeps; the pane says so. */
  output(text: string, reset = false, dropped = 0): void {
    if (reset) {
      this.lastWasCR = false;
      this.exitShown = false;
      this.history = [];
      this.historyLength = 0;
      this.dropped = 0;
      this.lines = 0;
      this.exitPending = undefined;
      // What was waiting belongs to the output the reset clears.
      this.queue = [];
      this.queueAt = 0;
      if (this.opened) this.enqueue(CLEAR_SEQUENCE);
      if (dropped > 0) this.emit(`${dim(`[acpls: ${dropped} earlier bytes of this output are not kept (acpls.terminal.scrollbackBytes)]`)}\r\n`);
    }
    const normal = this.normalise(text);
    this.lines += countLineEnds(normal);
    if (this.exitPending !== undefined && normal !== "") this.outputWhileSettling = true;
    this.emit(normal);
  }

  exited(exitCode: number | undefined, signal: string | undefined): void {
    if (this.exitShown) return;
    this.exitShown = true;
    if (this.settle === undefined) {
      this.emitExit(exitCode, signal);
      return;
    }
    this.exitPending = { exitCode, signal };
    this.awaitSettle();
  }

  private awaitSettle(): void {
    const settle = this.settle;
    if (this.settling || settle === undefined) return;
    this.settling = true;
    this.outputWhileSettling = false;
    settle(() => {
      this.settling = false;
      const exit = this.exitPending;
      if (exit === undefined) return;
      if (this.outputWhileSettling) {
        this.awaitSettle();
        return;
      }
      this.exitPending = undefined;
      this.emitExit(exit.exitCode, exit.signal);
    });
  }

  private emitExit(exitCode: number | undefined, signal: string | undefined): void {
    let line = exitLine(exitCode, signal);
    if (this.scrollbackLines !== undefined && this.lines > this.scrollbackLines) {
      line = `${line.slice(0, -1)} · ${this.lines} lines, this pane keeps the last ${this.scrollbackLines} (terminal.integrated.scrollback)]`;
    }
    this.emit(`\r\n${dim(line)}\r\n`);
  }

  /**
   * A terminal opened on this output: everything kept so far goes out, in order, once its size is
   * known (`sized` false: VS Code had no dimensions yet, `setDimensions` will come).
   */
  open(sized = true): void {
    this.opened = true;
    this.sized = sized;
    this.queue = [];
    this.queueAt = 0;
    if (this.dropped > 0) {
      this.queue.push(
        `${dim(`[acpls: ${this.dropped} earlier characters of this output are not kept (acpls.terminal.scrollbackBytes is ${this.limit})]`)}\r\n`,
      );
    }
    this.queue.push(...this.history);
    this.pump();
  }

  /** The terminal's dimensions are known now: what waited for them goes out. */
  resized(): void {
    if (!this.opened || this.sized) return;
    this.sized = true;
    this.pump();
  }

  close(): void {
    this.opened = false;
    this.sized = false;
    this.queue = [];
    this.queueAt = 0;
  }

  private emit(text: string): void {
    if (text === "") return;
    this.history.push(text);
    this.historyLength += text.length;
    // Bounded: past the limit the oldest output goes, as from a terminal's scrollback.
    let drop = 0;
    while (this.historyLength > this.limit && this.history.length - drop > 1) {
      const first = this.history[drop] ?? "";
      this.historyLength -= first.length;
      this.dropped += first.length;
      drop += 1;
    }
    if (drop > 0) this.history.splice(0, drop);
    if (this.opened) this.enqueue(text);
  }

  private enqueue(text: string): void {
    this.queue.push(text);
    this.pump();
  }

  /** Writes one slice now and schedules the next; a no-op while a tick is pending or unsized. */
  private pump(): void {
    if (this.ticking || !this.opened || !this.sized || this.queue.length === 0) return;
    let budget = this.slice();
    let out = "";
    while (budget > 0 && this.queue.length > 0) {
      const first = this.queue[0] ?? "";
      let end = Math.min(first.length, this.queueAt + budget);
      // Never split a surrogate pair between two writes.
      if (end < first.length && end > this.queueAt + 1 && isHighSurrogate(first.charCodeAt(end - 1))) end -= 1;
      out += first.slice(this.queueAt, end);
      budget -= end - this.queueAt;
      if (end >= first.length) {
        this.queue.shift();
        this.queueAt = 0;
      } else {
        this.queueAt = end;
        break;
      }
    }
    if (out !== "") this.write(out);
    if (this.queue.length > 0) {
      this.ticking = true;
      this.tick(() => {
        this.ticking = false;
        this.pump();
      });
    }
  }
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function countLineEnds(text: string): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) n += 1;
  return n;
}

export function exitLine(exitCode: number | undefined, signal: string | undefined): string {
  if (signal !== undefined) return `[process killed by ${signal}]`;
  if (exitCode !== undefined) return `[process exited with code ${exitCode}]`;
  return "[process exited]";
}

/**
 * The VS Code terminal's name: the command with absolute paths shortened to their last part
 * (`/venv/bin/python /x/checks.py` → `python checks.py`), at most 40 characters, or a placeholder
 * until the command is known.
 */
export function terminalName(command: string | undefined, terminalId: string): string {
  if (command === undefined || command.trim() === "") return `agent: ${terminalId}`;
  const words = command
    .trim()
    .split(/\s+/)
    .map((word) => (/^\/\S*\/[^/]+$/.test(word) ? word.slice(word.lastIndexOf("/") + 1) : word));
  const oneLine = words.join(" ");
  return oneLine.length > 40 ? `${oneLine.slice(0, 39)}…` : oneLine;
}
