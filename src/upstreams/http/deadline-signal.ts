import { EventEmitter } from 'node:events';
import type { Span } from '#src/platform/tracing/tracer.js';

/**
 * What ends a call at its deadline: the signal undici's dispatcher listens to (an EventEmitter with
 * `aborted` and `reason`, which undici takes as well as an AbortSignal), made for every upstream call
 * without an AbortController, whose EventTarget costs ten times as much to make and listen to. The
 * typed clients hand it on in their call's options (`deadline`) to the transport's dispatch. It also carries the provider call's span to
 * the transport (the parent in the traceparent of each attempt), instead of an async context of its own.
 */
export class DeadlineSignal extends EventEmitter {
  aborted = false;
  reason: unknown = undefined;

  constructor(readonly span?: Span) {
    super();
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.emit('abort');
  }
}
