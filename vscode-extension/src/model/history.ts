// Prompt history for the prompt box: Up/Down walk through earlier prompts (most recent first) while
// the caret is on the first/last line; the draft being typed is kept and comes back at the end.

export class PromptHistory {
  private readonly entries: string[];
  private position: number;
  private draft = "";

  constructor(
    entries: readonly string[] = [],
    private readonly limit = 200,
  ) {
    this.entries = entries.slice(-limit);
    this.position = this.entries.length;
  }

  /** Records a sent prompt (consecutive duplicates and blank prompts are not repeated). */
  add(prompt: string): void {
    if (prompt.trim() !== "" && this.entries[this.entries.length - 1] !== prompt) {
      this.entries.push(prompt);
      if (this.entries.length > this.limit) this.entries.shift();
    }
    this.position = this.entries.length;
    this.draft = "";
  }

  /** The previous prompt, or undefined at the oldest one. `current` is what the box holds now. */
  previous(current: string): string | undefined {
    if (this.position === 0) return undefined;
    if (this.position === this.entries.length) this.draft = current;
    this.position -= 1;
    return this.entries[this.position];
  }

  /** The next prompt, the saved draft past the newest one, or undefined when already there. */
  next(): string | undefined {
    if (this.position >= this.entries.length) return undefined;
    this.position += 1;
    return this.position === this.entries.length ? this.draft : this.entries[this.position];
  }

  all(): string[] {
    return [...this.entries];
  }
}
