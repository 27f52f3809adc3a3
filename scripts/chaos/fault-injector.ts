/** One kind of database fault, injected again and again at random moments. */
export interface FaultInjector {
  /** Do the damage once (it may last: a lock-out is held until it ends). */
  inject(): Promise<void>;
  /** Ends a fault in progress at once. */
  interrupt(): void;
  close(): Promise<void>;
  report(): Record<string, number>;
}
