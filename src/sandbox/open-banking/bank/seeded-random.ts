/**
 * Deterministic pseudo-random numbers (mulberry32 seeded from a string hash), so that the
 * sandbox's account history is the same on every start and in every test.
 */
export class SeededRandom {
  private state: number;

  /** A string seed is hashed (FNV-1a); a number seed is the state itself. */
  constructor(seed: string | number) {
    if (typeof seed === 'number') {
      this.state = seed >>> 0;
      return;
    }
    let hash = 2166136261;
    for (const character of seed) hash = Math.imul(hash ^ character.charCodeAt(0), 16777619);
    this.state = hash >>> 0;
  }

  /** In [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Integer in [min, max]. */
  between(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }
}
