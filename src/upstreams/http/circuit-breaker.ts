export type BreakerState = 'closed' | 'half-open' | 'open';

export interface BreakerPolicy {
  /** Consecutive failures (no answer, or 5xx) that open the circuit. */
  failureThreshold: number;
  /** How long an open circuit refuses calls before one trial call is let through. */
  openMs: number;
}

interface Circuit {
  state: BreakerState;
  failures: number;
  openedAt: number;
  /** A trial call is in flight while half-open: others are refused until it ends. */
  trialInFlight: boolean;
}

/**
 * Circuit breakers of one upstream, one per key (the upstream as a whole, or one of its brands), so
 * that a failing bank does not hold every caller for the whole deadline. Per replica on purpose: each
 * replica learns an outage from its own calls within `failureThreshold` calls.
 */
export class CircuitBreakers {
  private readonly circuits = new Map<string, Circuit>();

  constructor(
    private readonly policy: BreakerPolicy,
    private readonly onChange: (key: string, state: BreakerState) => void = () => undefined,
    private readonly now: () => number = Date.now,
  ) {}

  /** Milliseconds until a call may be tried again, or 0 when the call may go now. */
  admit(key: string): number {
    const circuit = this.circuits.get(key);
    if (!circuit || circuit.state === 'closed') return 0;
    const waited = this.now() - circuit.openedAt;
    if (circuit.state === 'open') {
      if (waited < this.policy.openMs) return this.policy.openMs - waited;
      this.set(key, circuit, 'half-open');
    }
    if (circuit.trialInFlight) return Math.max(1, this.policy.openMs - waited);
    circuit.trialInFlight = true;
    return 0;
  }

  succeeded(key: string): void {
    const circuit = this.circuits.get(key);
    if (!circuit) return;
    circuit.failures = 0;
    circuit.trialInFlight = false;
    if (circuit.state !== 'closed') this.set(key, circuit, 'closed');
  }

  failed(key: string): void {
    const circuit = this.circuits.get(key) ?? {
      state: 'closed' as BreakerState,
      failures: 0,
      openedAt: 0,
      trialInFlight: false,
    };
    this.circuits.set(key, circuit);
    circuit.failures++;
    circuit.trialInFlight = false;
    if (circuit.state === 'half-open' || circuit.failures >= this.policy.failureThreshold) {
      circuit.openedAt = this.now();
      if (circuit.state !== 'open') this.set(key, circuit, 'open');
    }
  }

  state(key: string): BreakerState {
    return this.circuits.get(key)?.state ?? 'closed';
  }

  private set(key: string, circuit: Circuit, state: BreakerState): void {
    circuit.state = state;
    this.onChange(key, state);
  }
}
