/** The headers of a received answer, names in lower case: what openapi-fetch and the seam read of them. */
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
 * An upstream's answer as the typed clients read it (openapi-fetch reads `status`, `ok`,
 * `headers.get`, `text()` and `json()`), built straight from the dispatcher's answer instead of a
 * WHATWG Response, whose headers and body machinery cost more than the call's own work on the hot
 * path. The body is read once (`text()`), and parsed once: the contract check hands its parse on
 * (`parsedAs`), so that `json()` answers it.
 */
export class ReceivedAnswer {
  readonly ok: boolean;
  readonly statusText = '';
  readonly headers: AnswerHeaders;
  private textRead?: Promise<string>;
  private parsed?: { text: string; body: unknown };

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

  async json(): Promise<unknown> {
    const text = await this.text();
    if (this.parsed?.text === text) return this.parsed.body;
    return JSON.parse(text);
  }

  /** The body already parsed from `text` (undefined: not JSON, parsed on demand). */
  parsedAs(text: string, body: unknown): void {
    if (body !== undefined) this.parsed = { text, body };
  }

  /** As the typed clients' types want it: a Response (these are the members they read). */
  asResponse(): Response {
    return this as unknown as Response;
  }
}
