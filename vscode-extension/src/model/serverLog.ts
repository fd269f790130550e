// The server logs to stderr as `<date> <time> LEVEL logger: message` (Python logging). Each line goes
// to the output channel at its own level instead of all at "error"; lines without a level
// (traceback lines) keep the level of the line before them.

export type LogLevel = "trace" | "debug" | "info" | "warn" | "error";

const LEVELS: Record<string, LogLevel> = {
  DEBUG: "debug",
  INFO: "info",
  WARNING: "warn",
  WARN: "warn",
  ERROR: "error",
  CRITICAL: "error",
};

const LINE = /^\d{4}-\d\d-\d\d[ T][\d:,.]+ (DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) (.*)$/;

export class ServerLogParser {
  private last: LogLevel = "error";

  /** The level of a stderr line, and the text to log (the timestamp dropped: the channel adds one). */
  parse(line: string): { level: LogLevel; text: string } {
    const match = LINE.exec(line);
    if (match === null) return { level: this.last, text: line };
    this.last = LEVELS[match[1] ?? "ERROR"] ?? "error";
    return { level: this.last, text: match[2] ?? line };
  }
}
