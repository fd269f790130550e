// One agent terminal as VS Code shows it: output since the last reset is kept (bounded) and replayed
// when a pseudoterminal opens (VS Code drops what is written before `open`, and a terminal the user
// closed can be shown again); lone `\n` become `\r\n` (xterm does not return the carriage by itself;
// pty output already has `\r\n`); `reset` clears the screen; the exit is shown once.

/** Clears screen and scrollback and homes the cursor (xterm.js honours all three). */
export const CLEAR_SEQUENCE = "\x1b[0m\x1b[2J\x1b[3J\x1b[H";

export class TerminalText {
  /** Everything shown since the last reset (bounded), replayed whenever a terminal opens on it. */
  private history: string[] = [];
  private historyLength = 0;
  private lastWasCR = false;
  private opened = false;
  private exitShown = false;

  /** `write` is where text goes while the terminal is open; `limit` bounds what is kept. */
  constructor(
    private readonly write: (text: string) => void,
    private readonly limit = 4 * 1024 * 1024,
  ) {}

  get isOpen(): boolean {
    return this.opened;
  }

  /** What a terminal opened now would show. */
  get shown(): string {
    return this.history.join("");
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

  output(text: string, reset = false): void {
    if (reset) {
      this.lastWasCR = false;
      this.exitShown = false;
      this.history = [];
      this.historyLength = 0;
      if (this.opened) this.write(CLEAR_SEQUENCE);
    }
    this.emit(this.normalise(text));
  }

  exited(exitCode: number | undefined, signal: string | undefined): void {
    if (this.exitShown) return;
    this.exitShown = true;
    this.emit(`\r\n\x1b[2m${exitLine(exitCode, signal)}\x1b[0m\r\n`);
  }

  /** A terminal opened on this output: everything kept so far goes out, in order. */
  open(): void {
    this.opened = true;
    const shown = this.shown;
    if (shown !== "") this.write(shown);
  }

  close(): void {
    this.opened = false;
  }

  private emit(text: string): void {
    if (text === "") return;
    this.history.push(text);
    this.historyLength += text.length;
    // Bounded: past the limit the oldest output goes, as from a terminal's scrollback.
    while (this.historyLength > this.limit && this.history.length > 1) {
      this.historyLength -= this.history.shift()?.length ?? 0;
    }
    if (this.opened) this.write(text);
  }
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
