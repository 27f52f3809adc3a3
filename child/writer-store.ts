import { createConnection, type Socket } from 'node:net';
import { createInterface } from 'node:readline';
import { LeaseLostError } from '../src/errors.js';
import {
  fromWire,
  type Answer,
  type ChildWrite,
  type WriterAnswer,
  type WriterCall,
} from '../src/ipc/writer-protocol.js';
import type {
  ClaimedJob,
  ClaimRequest,
  JobStartParams,
  LeaseRef,
  LeaseStatus,
  RelatedJob,
  Settlement,
  SettleResult,
  WorkerStore,
} from '../src/store/types.js';
import type { WakeWatch } from '../src/store/wake-watch.js';

const NO_WAKE_WATCH: WakeWatch = { rearm: () => undefined, stop: async () => undefined };

/** What a call waiting for the writer is told when its connection closed (the supervisor is gone, or its writer restarted). */
const GONE: Answer = { ok: false, error: { name: 'Error', message: 'the connection to the writer closed' } };

/**
 * The child's end of the writer's calls (src/ipc/writer-protocol.ts): each
 * call numbered and sent on the writer's socket, and settled by its answer.
 * When the connection closes, every call waiting fails; the next call
 * connects again.
 */
export class WriterClient {
  private next = 0;
  private readonly waiting = new Map<number, (answer: Answer) => void>();
  private socket: Socket | undefined;

  constructor(private readonly path: string) {}

  async call(method: ChildWrite, params: unknown): Promise<unknown> {
    const socket = (this.socket ??= this.connect());
    const id = ++this.next;
    const answer = await new Promise<Answer>((resolve) => {
      this.waiting.set(id, resolve);
      socket.write(`${JSON.stringify({ id, method, params } satisfies WriterCall)}\n`);
    });
    if (!answer.ok) throw fromWire(answer.error);
    return answer.result;
  }

  /** Stop using the connection: the child is leaving. */
  close(): void {
    this.socket?.end();
  }

  private connect(): Socket {
    const socket = createConnection(this.path);
    const lines = createInterface({ input: socket });
    lines.on('line', (line) => {
      const { id, ...answer } = JSON.parse(line) as WriterAnswer;
      const settle = this.waiting.get(id);
      this.waiting.delete(id);
      settle?.(answer as Answer);
    });
    // An error ends in the close that follows: the calls waiting fail there (readline repeats the error).
    socket.on('error', () => undefined);
    lines.on('error', () => undefined);
    socket.on('close', () => {
      if (this.socket === socket) this.socket = undefined;
      for (const settle of this.waiting.values()) settle(GONE);
      this.waiting.clear();
    });
    return socket;
  }
}

/**
 * A child's store on SQLite: it opens no write transaction. Its writes are
 * made by its supervisor's writer, which commits them with its siblings'
 * (each still fenced on its own lease token); its reads (a job's parents),
 * its time and its wake-ups stay on its own connection, which only reads.
 */
export class WriterBackedStore implements WorkerStore {
  readonly driver: WorkerStore['driver'];
  readonly clock: WorkerStore['clock'];

  constructor(
    /** Its own connection; on SQLite it also tells whether a claim would take a job (SqliteStore.jobsDue). */
    private readonly local: WorkerStore & { jobsDue?(params: { classes: string[] }): Promise<boolean> },
    private readonly writer: Pick<WriterClient, 'call' | 'close'>,
  ) {
    this.driver = local.driver;
    this.clock = local.clock;
  }

  async jobsSettle(params: {
    settlements: Settlement[];
    claim?: ClaimRequest;
  }): Promise<{ settled: SettleResult[]; claimed: ClaimedJob[] }> {
    // An idle child is woken by any commit: it looks on its own connection before it asks the writer (a round trip).
    const { settlements, claim } = params;
    if (settlements.length === 0 && claim !== undefined && (await this.local.jobsDue?.(claim)) === false)
      return { settled: [], claimed: [] };
    return (await this.writer.call('jobsSettle', params)) as { settled: SettleResult[]; claimed: ClaimedJob[] };
  }

  async jobStart(params: JobStartParams): Promise<void> {
    await this.fenced('jobStart', params, 'start');
  }

  async leasesExtend(params: { leases: LeaseRef[]; leaseMs: number }): Promise<LeaseStatus[]> {
    return (await this.writer.call('leasesExtend', params)) as LeaseStatus[];
  }

  async jobProgress(params: LeaseRef & { progress: string }): Promise<void> {
    await this.fenced('jobProgress', params, 'progress');
  }

  jobParents(params: { id: number }): Promise<RelatedJob[]> {
    return this.local.jobParents(params);
  }

  subscribe(classes: string[], onJob: () => void, onError?: (error: Error) => void): Promise<WakeWatch> {
    return this.local.subscribe?.(classes, onJob, onError) ?? Promise.resolve(NO_WAKE_WATCH);
  }

  close(): Promise<void> {
    this.writer.close();
    return this.local.close();
  }

  /** A fenced write the writer turned away is the same LeaseLostError as a local one. */
  private async fenced(method: ChildWrite, ref: LeaseRef, operation: string): Promise<void> {
    try {
      await this.writer.call(method, ref);
    } catch (error) {
      if ((error as { code?: unknown }).code === 'LEASE:LOST')
        throw new LeaseLostError(ref.id, ref.leaseToken, operation);
      throw error;
    }
  }
}
