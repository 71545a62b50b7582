/**
 * A Map that remembers which keys were read or written since the last `takeTouched()`: the bank
 * mutates its records in place after getting them, so every key handed out may have changed.
 */
export class TrackedMap<K, V> extends Map<K, V> {
  private touched = new Set<K>();

  override get(key: K): V | undefined {
    this.touched.add(key);
    return super.get(key);
  }

  override set(key: K, value: V): this {
    // Map's constructor calls set before this subclass's fields exist.
    this.touched?.add(key);
    return super.set(key, value);
  }

  override delete(key: K): boolean {
    this.touched.add(key);
    return super.delete(key);
  }

  /** The value without marking the key touched. */
  peek(key: K): V | undefined {
    return super.get(key);
  }

  /** Keys read or written since the last call, and forgets them. */
  takeTouched(): K[] {
    const keys = [...this.touched];
    this.touched.clear();
    return keys;
  }
}
