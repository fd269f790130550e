// Prompts written while the agent works (pure: no vscode import): kept in order, shown in the panel,
// editable (taken back into the input) and removable, and sent one by one as turns end.

export type QueuedPrompt<C = unknown> = { id: number; text: string; context: C[] };

export class PromptQueue<C = unknown> {
  private items: QueuedPrompt<C>[] = [];
  private nextId = 1;

  get list(): readonly QueuedPrompt<C>[] {
    return this.items;
  }

  add(text: string, context: C[] = []): QueuedPrompt<C> {
    const item = { id: this.nextId++, text, context };
    this.items.push(item);
    return item;
  }

  /** Takes a queued prompt out (to edit, remove or steer with it). */
  take(id: number): QueuedPrompt<C> | undefined {
    const at = this.items.findIndex((i) => i.id === id);
    return at < 0 ? undefined : this.items.splice(at, 1)[0];
  }

  /** The next prompt to send, taken out of the queue. */
  next(): QueuedPrompt<C> | undefined {
    return this.items.shift();
  }

  clear(): void {
    this.items = [];
  }
}
