export const FAULT_KINDS = [
  'delay',
  'status',
  'reset',
  'hang',
  'stall-body',
  'bad-json',
  'act-then-fail',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

const THEN_KINDS = ['status', 'reset', 'hang'] as const;
export type ThenKind = (typeof THEN_KINDS)[number];

/** A rule as given to `POST /sandbox/chaos` or `sandbox.chaos.add()`. */
export interface ChaosRuleInput {
  /** The upstream operationId (`getBalances`, `createConsent`, …) or `*` for any operation. */
  operation: string;
  fault: FaultKind;
  /** Fire for this many calls, then stop; omitted: until the rule is deleted. */
  times?: number;
  /** Share of the matching calls that fault, 0..1 (default 1). */
  probability?: number;
  /** Makes the probability draws reproducible. */
  seed?: string | number;
  /** `delay`: how late the answer comes. */
  delayMs?: number;
  /** `status` (default 500), `act-then-fail` with then `status` (default 500), `bad-json` (default 200). */
  status?: number;
  /** `status`, `act-then-fail`: the answer's JSON body (default a Berlin Group tppMessages body); `bad-json`: the text sent. */
  body?: unknown;
  /** `status`, `act-then-fail`: answer without a body. */
  emptyBody?: boolean;
  /** `status`, `act-then-fail`: extra answer headers, e.g. `retry-after`. */
  headers?: Record<string, string>;
  /** `act-then-fail`: what happens to the answer once the operation was performed (default `status`). */
  then?: ThenKind;
  /** `stall-body`: how many bytes of the body are sent before the stall (default half of it). */
  bytes?: number;
}

/** An answer that replaces the operation's own. */
export interface FailedAnswer {
  status: number;
  /** undefined: the listener's default error body. */
  body?: unknown;
  emptyBody: boolean;
  headers: Record<string, string>;
}

export type Fault =
  | { kind: 'delay'; delayMs: number }
  | { kind: 'status'; answer: FailedAnswer }
  | { kind: 'reset' }
  | { kind: 'hang' }
  | { kind: 'stall-body'; bytes?: number }
  | { kind: 'bad-json'; status: number; text: string }
  | {
      kind: 'act-then-fail';
      then: { kind: 'status'; answer: FailedAnswer } | { kind: 'reset' } | { kind: 'hang' };
    };

export interface ChaosRule {
  operation: string;
  fault: Fault;
  times: number | null;
  probability: number;
  seed?: string | number;
  /** The input with its defaults filled in, as listed by `GET /sandbox/chaos`. */
  described: ChaosRuleInput;
}

export class ChaosRuleError extends Error {
  constructor(readonly problems: string[]) {
    super(`bad chaos rule: ${problems.join('; ')}`);
  }
}

const COMMON = ['operation', 'fault', 'times', 'probability', 'seed'];
const ANSWER_FIELDS = ['status', 'body', 'emptyBody', 'headers'];
const OPTIONS: Record<FaultKind, string[]> = {
  delay: ['delayMs'],
  status: ANSWER_FIELDS,
  reset: [],
  hang: [],
  'stall-body': ['bytes'],
  'bad-json': ['status', 'body'],
  'act-then-fail': ['then', ...ANSWER_FIELDS],
};
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const DEFAULT_BAD_JSON = '<html><body><h1>Service temporarily unavailable</h1></body></html>';
const MAX_DELAY_MS = 600_000;

const isInteger = (value: unknown, min: number, max: number): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
const list = (values: readonly string[]) => values.map((v) => `'${v}'`).join(', ');

/**
 * Checks a rule from outside (JSON or a test) and fills in its defaults; throws ChaosRuleError naming
 * every problem. `operations` are the operationIds the listener knows.
 */
export function parseChaosRule(input: unknown, operations: readonly string[]): ChaosRule {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw new ChaosRuleError(['the rule must be a JSON object']);
  const raw = input as Record<string, unknown>;
  const problems: string[] = [];
  const fault = raw.fault as FaultKind;
  if (!FAULT_KINDS.includes(fault)) problems.push(`fault must be one of ${list(FAULT_KINDS)}`);
  if (typeof raw.operation !== 'string' || !['*', ...operations].includes(raw.operation))
    problems.push(`operation must be '*' or one of ${list(operations)}`);
  if (raw.times !== undefined && !isInteger(raw.times, 1, Number.MAX_SAFE_INTEGER))
    problems.push('times must be a whole number of at least 1');
  if (
    raw.probability !== undefined &&
    (typeof raw.probability !== 'number' || !(raw.probability >= 0 && raw.probability <= 1))
  )
    problems.push('probability must be a number from 0 to 1');
  if (
    raw.seed !== undefined &&
    !(typeof raw.seed === 'string' && raw.seed.length <= 200) &&
    !isInteger(raw.seed, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)
  )
    problems.push('seed must be a string or a whole number');
  if (raw.seed !== undefined && raw.probability === undefined)
    problems.push('seed needs a probability');
  // The options allowed depend on the fault.
  if (!FAULT_KINDS.includes(fault)) throw new ChaosRuleError(problems);

  for (const key of Object.keys(raw))
    if (!COMMON.includes(key) && !OPTIONS[fault].includes(key))
      problems.push(
        Object.values(OPTIONS).some((fields) => fields.includes(key))
          ? `${key} does not apply to fault '${fault}'`
          : `unknown field ${key}`,
      );
  if (fault === 'act-then-fail') {
    if (raw.then !== undefined && !THEN_KINDS.includes(raw.then as ThenKind))
      problems.push(`then must be one of ${list(THEN_KINDS)}`);
    else if (raw.then !== undefined && raw.then !== 'status')
      for (const key of ANSWER_FIELDS)
        if (raw[key] !== undefined) problems.push(`${key} does not apply to then '${raw.then}'`);
  }
  const built = buildFault(fault, raw, problems);
  if (problems.length > 0) throw new ChaosRuleError(problems);

  const operation = raw.operation as string;
  // The rule as given (every field checked above), with the defaults it took.
  const described: ChaosRuleInput = { ...raw, operation, fault, ...defaultsOf(built) };
  return {
    operation,
    fault: built,
    times: (raw.times as number | undefined) ?? null,
    probability: (raw.probability as number | undefined) ?? 1,
    seed: raw.seed as string | number | undefined,
    described,
  };
}

function buildFault(kind: FaultKind, raw: Record<string, unknown>, problems: string[]): Fault {
  switch (kind) {
    case 'delay':
      if (!isInteger(raw.delayMs, 0, MAX_DELAY_MS))
        problems.push(`delayMs must be a whole number of milliseconds from 0 to ${MAX_DELAY_MS}`);
      return { kind, delayMs: raw.delayMs as number };
    case 'status':
      return { kind, answer: failedAnswer(raw, problems) };
    case 'reset':
    case 'hang':
      return { kind };
    case 'stall-body':
      if (raw.bytes !== undefined && !isInteger(raw.bytes, 0, 1_000_000))
        problems.push('bytes must be a whole number from 0');
      return { kind, bytes: raw.bytes as number | undefined };
    case 'bad-json':
      if (raw.status !== undefined && !isInteger(raw.status, 200, 299))
        problems.push('status must be a 2xx status for bad-json');
      if (raw.body !== undefined && (typeof raw.body !== 'string' || isJson(raw.body)))
        problems.push('body must be a string that is not JSON for bad-json');
      return {
        kind,
        status: (raw.status as number | undefined) ?? 200,
        text: (raw.body as string | undefined) ?? DEFAULT_BAD_JSON,
      };
    case 'act-then-fail': {
      const then = (raw.then as ThenKind | undefined) ?? 'status';
      return {
        kind,
        then:
          then === 'status' ? { kind: then, answer: failedAnswer(raw, problems) } : { kind: then },
      };
    }
  }
}

function failedAnswer(raw: Record<string, unknown>, problems: string[]): FailedAnswer {
  if (raw.status !== undefined && !isInteger(raw.status, 200, 599))
    problems.push('status must be an HTTP status from 200 to 599');
  if (raw.emptyBody !== undefined && typeof raw.emptyBody !== 'boolean')
    problems.push('emptyBody must be true or false');
  if (raw.emptyBody === true && raw.body !== undefined)
    problems.push('body and emptyBody exclude each other');
  const headers = raw.headers ?? {};
  if (
    typeof headers !== 'object' ||
    headers === null ||
    Array.isArray(headers) ||
    Object.entries(headers).some(
      ([name, value]) => !HEADER_NAME.test(name) || !isHeaderValue(value),
    )
  )
    problems.push('headers must be an object of header names to string values');
  return {
    status: (raw.status as number | undefined) ?? 500,
    body: raw.body,
    emptyBody: raw.emptyBody === true,
    headers: headers as Record<string, string>,
  };
}

const isHeaderValue = (value: unknown) =>
  typeof value === 'string' && value.length <= 1000 && !/[\r\n\0]/.test(value);

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function defaultsOf(fault: Fault): Partial<ChaosRuleInput> {
  switch (fault.kind) {
    case 'status':
      return { status: fault.answer.status };
    case 'bad-json':
      return { status: fault.status, body: fault.text };
    case 'act-then-fail':
      return fault.then.kind === 'status'
        ? { then: 'status', status: fault.then.answer.status }
        : { then: fault.then.kind };
    default:
      return {};
  }
}
