/**
 * The promise's outcome, or a rejection `no answer within <ms> ms` once `ms` have passed (the promise itself
 * runs on): for checks that must answer while what they ask hangs.
 */
export async function withinMs<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, fail) => {
        timer = setTimeout(() => fail(new Error(`no answer within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
