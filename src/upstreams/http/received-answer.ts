/** The headers of a received answer, names in lower case: what the typed clients and the seam read of them. */
export class AnswerHeaders {
  private readonly values = new Map<string, string>();

  constructor(raw: Record<string, string | string[] | undefined>) {
    for (const name in raw) {
      const value = raw[name];
      if (value !== undefined)
        this.values.set(name.toLowerCase(), Array.isArray(value) ? value.join(', ') : value);
    }
  }

  get(name: string): string | null {
    return this.values.get(name.toLowerCase()) ?? null;
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.values.entries();
  }
}

/**
 * An upstream's answer as the transport received it: its status and headers at once, its body read once
 * when someone asks for it (`text()`: the contract check), so that a body that breaks off or stalls fails
 * there. Built straight from the dispatcher's answer, without a WHATWG Response's headers and body
 * machinery, which cost more than the call's own work on the hot path.
 */
export class ReceivedAnswer {
  readonly ok: boolean;
  readonly headers: AnswerHeaders;
  private textRead?: Promise<string>;

  constructor(
    readonly status: number,
    headers: Record<string, string | string[] | undefined>,
    private readonly readBody: () => Promise<string>,
  ) {
    this.ok = status >= 200 && status < 300;
    this.headers = new AnswerHeaders(headers);
  }

  text(): Promise<string> {
    this.textRead ??= this.readBody();
    return this.textRead;
  }
}
