import { systemClock } from '../../../src/clock.js';
import type { PoolStore } from '../../../supervisor/class-pool.js';

/** The store calls a ClassPool makes, answered at once; it keeps what the class's disabled record says. */
export class FakePoolStore implements PoolStore {
  /** The class's disabled reason as recorded, undefined once cleared. */
  disabled: string | undefined;
  readonly exits: string[] = [];
  readonly clock = systemClock;

  async workerRegister(): Promise<void> {}
  async workerHeartbeat(): Promise<void> {}
  async workerExit({ id }: { id: string }): Promise<void> {
    this.exits.push(id);
  }
  async leasesRecoverByOwner(): Promise<[]> {
    return [];
  }
  async leasesReleaseByOwner(): Promise<[]> {
    return [];
  }
  async classDisabledRecord({ reason }: { reason: string }): Promise<void> {
    this.disabled = reason;
  }
  async classDisabledClear(): Promise<void> {
    this.disabled = undefined;
  }
}
