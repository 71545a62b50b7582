/**
 * Values trusted for a while each, at most `max` of them (beyond, the oldest go): the replica's caches
 * of what it read lately (API keys, merchant keys). A value set with a lifetime of 0 is not kept.
 */
export class ExpiringMap<K, V> {
  private readonly entries = new Map<K, { value: V; until: number }>();

  constructor(private readonly max: number) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.until <= Date.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: K, value: V, ttlMs: number): void {
    if (ttlMs <= 0) return;
    if (!this.entries.has(key) && this.entries.size >= this.max)
      this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { value, until: Date.now() + ttlMs });
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  /** Forgets every value `test` picks. */
  deleteWhere(test: (value: V) => boolean): void {
    for (const [key, entry] of this.entries) if (test(entry.value)) this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}
