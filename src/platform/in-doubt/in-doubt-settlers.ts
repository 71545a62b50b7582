import { Global, Injectable, Module } from '@nestjs/common';

/** A capability's writes in doubt, settled with its provider by the one resolver (see InDoubtResolver). */
export interface InDoubtSettler {
  /** For the resolver's log line: `card`. */
  name: string;
  /** One pass over its rows in doubt (each under a lease); answers how many it worked. */
  settle(): Promise<number>;
}

/** Where capabilities beyond open banking (the card API) register the settling of their writes in doubt. */
@Injectable()
export class InDoubtSettlers {
  private readonly settlers: InDoubtSettler[] = [];

  register(settler: InDoubtSettler): void {
    this.settlers.push(settler);
  }

  all(): readonly InDoubtSettler[] {
    return this.settlers;
  }
}

@Global()
@Module({ providers: [InDoubtSettlers], exports: [InDoubtSettlers] })
export class InDoubtModule {}
