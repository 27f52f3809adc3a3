/**
 * A value read at most once per `maxAgeMs`: callers within that time get
 * the value read last, and callers while a read is in flight share it (a
 * few tabs polling at once start one read). A failed read is not kept.
 */
export class Recent<T> {
  private last: { value: T; at: number } | undefined;
  private reading: Promise<{ value: T; at: number }> | undefined;

  constructor(
    private readonly maxAgeMs: number,
    private readonly now: () => number,
    private readonly read: () => Promise<T>,
  ) {}

  /** The value, and when it was read. */
  get(): Promise<{ value: T; at: number }> {
    if (this.last !== undefined && this.now() - this.last.at < this.maxAgeMs) return Promise.resolve(this.last);
    this.reading ??= this.fresh().finally(() => (this.reading = undefined));
    return this.reading;
  }

  private async fresh(): Promise<{ value: T; at: number }> {
    const at = this.now();
    this.last = { value: await this.read(), at };
    return this.last;
  }
}
