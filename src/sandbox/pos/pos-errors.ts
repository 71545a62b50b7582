/** A POS refusal: its code (10001-10013) and, for 10001, the fields refused. */
export class PosError extends Error {
  constructor(
    readonly code: number,
    readonly invalidParams?: { name: string; reason: string }[],
  ) {
    super(`pos error ${code}`);
  }
}

/** 10001 naming one field. */
export const invalidParam = (name: string, reason: string) =>
  new PosError(10001, [{ name, reason }]);

export interface PosAnswer {
  status: number;
  body: unknown;
}
