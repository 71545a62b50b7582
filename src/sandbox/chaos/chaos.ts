import { SeededRandom } from '../open-banking/bank/seeded-random.js';
import { parseChaosRule, type ChaosRuleInput, type Fault } from './chaos-rule.js';

export type { ChaosRuleInput, Fault } from './chaos-rule.js';
export { ChaosRuleError } from './chaos-rule.js';

/** A rule as listed: what it does, how many more calls it will fault, and what it did so far. */
export type ChaosRuleView = ChaosRuleInput & {
  id: number;
  /** Calls it will still fault; null: no limit. */
  remaining: number | null;
  /** Calls it faulted. */
  fired: number;
  /** Calls of its operation it was asked about (with a probability, some of them answered normally). */
  matched: number;
  /** The operation's own answers it kept from the client (the latest 10), for tests to see what happened. */
  withheld: WithheldAnswer[];
};

export interface WithheldAnswer {
  status: number;
  body?: unknown;
}

const WITHHELD_KEPT = 10;

/** The fault chosen for one call. */
export interface DrawnFault {
  ruleId: number;
  fault: Fault;
}

interface ActiveRule {
  id: number;
  operation: string;
  fault: Fault;
  remaining: number | null;
  probability: number;
  random: () => number;
  fired: number;
  matched: number;
  withheld: WithheldAnswer[];
  described: ChaosRuleInput;
}

/**
 * Fault-injection rules of one sandbox listener. A call of an operation goes through the rules in the
 * order they were added; the first that matches its operation, has calls left and wins its probability
 * draw decides the call's fault. Spent rules stay listed (remaining 0) until deleted.
 */
export class Chaos {
  private rules: ActiveRule[] = [];
  private nextId = 1;

  /** @param operations the operationIds the listener serves; rules naming others are refused. */
  constructor(readonly operations: readonly string[]) {}

  /** Adds a rule; throws ChaosRuleError when it is not valid. */
  add(input: ChaosRuleInput): ChaosRuleView {
    const rule = parseChaosRule(input, this.operations);
    const seeded = rule.seed === undefined ? undefined : new SeededRandom(String(rule.seed));
    const active: ActiveRule = {
      id: this.nextId++,
      operation: rule.operation,
      fault: rule.fault,
      remaining: rule.times,
      probability: rule.probability,
      random: seeded ? () => seeded.next() : Math.random,
      fired: 0,
      matched: 0,
      withheld: [],
      described: rule.described,
    };
    this.rules.push(active);
    return this.view(active);
  }

  list(): ChaosRuleView[] {
    return this.rules.map((rule) => this.view(rule));
  }

  /** Deletes one rule; false when there is none with this id. */
  remove(id: number): boolean {
    const before = this.rules.length;
    this.rules = this.rules.filter((rule) => rule.id !== id);
    return this.rules.length < before;
  }

  clear(): void {
    this.rules = [];
  }

  /** Decides the fault of one call of `operation`, counting it; undefined: answer normally. */
  draw(operation: string): DrawnFault | undefined {
    for (const rule of this.rules) {
      if (rule.remaining === 0 || (rule.operation !== '*' && rule.operation !== operation))
        continue;
      rule.matched++;
      if (rule.probability < 1 && !(rule.random() < rule.probability)) continue;
      rule.fired++;
      if (rule.remaining !== null) rule.remaining--;
      return { ruleId: rule.id, fault: rule.fault };
    }
    return undefined;
  }

  /** Notes an answer a fault of rule `ruleId` kept from the client. */
  recordWithheld(ruleId: number, answer: WithheldAnswer): void {
    const rule = this.rules.find((candidate) => candidate.id === ruleId);
    if (!rule) return;
    rule.withheld.push(answer);
    if (rule.withheld.length > WITHHELD_KEPT) rule.withheld.shift();
  }

  private view(rule: ActiveRule): ChaosRuleView {
    return {
      id: rule.id,
      ...rule.described,
      remaining: rule.remaining,
      fired: rule.fired,
      matched: rule.matched,
      withheld: [...rule.withheld],
    };
  }
}
