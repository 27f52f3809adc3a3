/**
 * Traces on real processes: a producer's HTTP request span, through the
 * enqueue, into each attempt's span and the handler's own span in a child;
 * a retry as a second attempt span; a SIGKILLed child's attempt ended by
 * its supervisor. Every process preloads an SDK (NODE_OPTIONS, which the
 * supervisor's children inherit) that appends finished spans to one file.
 */
import { execa } from 'execa';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { trackProcess, useProcessGuard } from '../helpers/processes.js';
import { startSupervisor, type ClassSpec, type SupervisorHandle } from '../helpers/supervisor.js';
import { LEASEHOLD_BIN } from '../cli/helpers.js';
import { claimJobs } from '../helpers/fenced-writes.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

useProcessGuard();
const newDir = tempDir('leasehold-tracing-');
const PRELOAD = path.resolve('test/fixtures/tracing/otel-preload.mjs');
const PRODUCER = path.resolve('test/fixtures/tracing/producer.mjs');
const INDEX = path.resolve('dist/src/index.js');

interface SpanLine {
  pid: number;
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  status: { code: number; message?: string };
  attributes: Record<string, unknown>;
  events: { name: string; attributes: Record<string, unknown> }[];
}

const KIND = { SERVER: 1, PRODUCER: 3, CONSUMER: 4 };
const STATUS_UNSET = 0;
const STATUS_ERROR = 2;

function spansIn(file: string): SpanLine[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as SpanLine);
}

interface Traced {
  sup: SupervisorHandle;
  /** Stop the producer and the supervisor. */
  stop: () => Promise<void>;
  /** The environment every process of the test runs with: the preload and the span file. */
  env: Record<string, string>;
  dir: string;
  spans: () => SpanLine[];
  /** Enqueue through the producer's HTTP server (class `traced` by default): the job id. */
  request: (payload: unknown, jobClass?: string) => Promise<number>;
  /** Enqueue a job whose handler starts and never ends (`spin`: blocking its loop): its id and its child's pid. */
  hanging: (options?: { spin?: boolean }) => Promise<{ id: number; childPid: number }>;
}

async function traced({
  batched = false,
  schedules,
  shutdownGraceSeconds,
  heartbeatSeconds,
}: {
  batched?: boolean;
  schedules?: ClassSpec['schedules'];
  shutdownGraceSeconds?: number;
  heartbeatSeconds?: number;
} = {}): Promise<Traced> {
  const dir = newDir();
  const spanFile = path.join(dir, 'spans.jsonl');
  const env = {
    NODE_OPTIONS: `--import ${PRELOAD}`,
    LEASEHOLD_TEST_SPANS: spanFile,
    ...(batched ? { LEASEHOLD_TEST_SPANS_BATCHED: '1' } : {}),
  };
  const sup = await startSupervisor({
    dir,
    env,
    classes: [
      {
        name: 'traced',
        handler: 'traced',
        max_retries: 1,
        kill_grace_seconds: 0.2,
        ...(heartbeatSeconds === undefined
          ? {}
          : { heartbeat_seconds: heartbeatSeconds, lease_seconds: 4 * heartbeatSeconds }),
        schedules,
      },
    ],
    shutdownGraceSeconds,
  });
  const producer = execa('node', [PRODUCER, INDEX, sup.database], { env, reject: false, stdin: 'ignore' });
  trackProcess(producer.pid!, 'producer');
  let printed = '';
  producer.stdout.on('data', (chunk: Buffer) => (printed += chunk.toString()));
  const port = await waitFor('the producer to listen', () => /^(\d+)\n/.exec(printed)?.[1]);
  const request = async (payload: unknown, jobClass = 'traced') => {
    const query = `payload=${encodeURIComponent(JSON.stringify(payload))}&class=${jobClass}`;
    const response = await fetch(`http://127.0.0.1:${port}/?${query}`);
    return Number(await response.text());
  };
  const stop = async () => {
    producer.kill('SIGTERM');
    await producer;
    await sup.stop();
  };
  const hanging = async ({ spin = false } = {}) => {
    const pidFile = path.join(dir, `handler-${Date.now()}.pid`);
    writeFileSync(pidFile, '');
    const id = await request({ pidFile, spin });
    const childPid = await waitFor('the handler to start', () => Number(readFileSync(pidFile, 'utf8')) || undefined);
    return { id, childPid };
  };
  return { sup, dir, stop, env, spans: () => spansIn(spanFile), request, hanging };
}

const ofJob = (spans: SpanLine[], id: number) =>
  spans.filter((span) => span.attributes['messaging.message.id'] === String(id));

describe('OpenTelemetry traces across processes', () => {
  it('follows an HTTP request through its enqueue into the attempt and the handler’s own span', async () => {
    const { sup, stop, spans, request } = await traced();
    const id = await request({ n: 1 });
    await sup.queue.waitFor(id, { timeoutMs: 20_000 });
    const server = await waitFor('the request span', () => spans().find((span) => span.kind === KIND.SERVER));
    const send = await waitFor('the send span', () => ofJob(spans(), id).find((span) => span.kind === KIND.PRODUCER));
    const process_ = await waitFor('the attempt span', () =>
      ofJob(spans(), id).find((span) => span.kind === KIND.CONSUMER),
    );
    const work = await waitFor('the handler’s span', () => spans().find((span) => span.name === 'handler work'));

    expect(send).toMatchObject({ name: 'send traced', traceId: server.traceId, parentSpanId: server.spanId });
    expect(process_).toMatchObject({ name: 'process traced', traceId: server.traceId, parentSpanId: send.spanId });
    expect(process_.attributes).toMatchObject({
      'messaging.system': 'leasehold',
      'messaging.destination.name': 'traced',
      'messaging.message.id': String(id),
      'leasehold.job.attempt': 1,
      'leasehold.job.outcome': 'succeeded',
    });
    expect(work).toMatchObject({ traceId: server.traceId, parentSpanId: process_.spanId });
    // The producer, the child: spans from two processes, one trace.
    expect(process_.pid).not.toBe(send.pid);
    const logged = await waitFor('the job’s log line', () => sup.logEvents().find((line) => line.msg === 'working'));
    expect(logged).toMatchObject({ job_id: id, trace_id: server.traceId });
    await stop();
  });

  it('gives a retried job a second attempt span in the same trace', async () => {
    const { sup, stop, spans, request } = await traced();
    const id = await request({ failFirst: true });
    expect((await sup.queue.waitFor(id, { timeoutMs: 20_000 })).status).toBe('SUCCEEDED');
    const attempts = await waitFor('two attempt spans', () => {
      const found = ofJob(spans(), id).filter((span) => span.kind === KIND.CONSUMER);
      return found.length === 2 && found;
    });
    const send = ofJob(spans(), id).find((span) => span.kind === KIND.PRODUCER)!;
    const [first, second] = attempts.sort(
      (a, b) => Number(a.attributes['leasehold.job.attempt']) - Number(b.attributes['leasehold.job.attempt']),
    );
    for (const attempt of attempts) expect(attempt).toMatchObject({ traceId: send.traceId, parentSpanId: send.spanId });
    expect(first!.status.code).toBe(STATUS_ERROR);
    expect(first!.attributes).toMatchObject({ 'leasehold.job.outcome': 'failed' });
    expect(first!.events.map((event) => event.name)).toContain('exception');
    expect(second!.attributes).toMatchObject({ 'leasehold.job.attempt': 2, 'leasehold.job.outcome': 'succeeded' });
    expect(sup.events('JOB_RETRY_SCHEDULED', { job_id: id })[0]?.trace_id).toBe(send.traceId);
    await stop();
  });

  it('ends a SIGKILLed child’s attempt span from its supervisor, with the crash', async () => {
    const { sup, stop, spans, hanging } = await traced();
    const { id, childPid } = await hanging();
    process.kill(childPid, 'SIGKILL');
    const crashed = await waitFor('the crashed attempt’s span', () =>
      ofJob(spans(), id).find((span) => span.kind === KIND.CONSUMER && span.attributes['leasehold.job.attempt'] === 1),
    );
    const send = ofJob(spans(), id).find((span) => span.kind === KIND.PRODUCER)!;
    expect(crashed).toMatchObject({ traceId: send.traceId, parentSpanId: send.spanId, pid: sup.pid });
    expect(crashed.status.code).toBe(STATUS_ERROR);
    expect(crashed.status.message).toMatch(/SIGKILL/);
    expect(crashed.attributes).toMatchObject({ 'error.type': 'WORKER:CRASHED', 'leasehold.job.outcome': 'crashed' });
    const recovered = await waitFor('the take-back’s log line', () => sup.events('JOB_RECOVERED', { job_id: id })[0]);
    expect(recovered.trace_id).toBe(send.traceId);
    await stop();
  });

  it('emits no attempt span for a job the dead child held but had not begun', async () => {
    const { sup, stop, spans, request, hanging } = await traced();
    const { id: running, childPid } = await hanging();
    const { job } = await sup.waitForJob(running, 'RUNNING');
    // Held by the same child, as a prefetched job is, and never begun.
    const waiting = await request(null, 'elsewhere');
    const [held] = await claimJobs(sup.queue.store, {
      classes: ['elsewhere'],
      ownerId: job.owner_id!,
      limit: 1,
      leaseMs: 60_000,
    });
    expect(held?.id).toBe(waiting);
    process.kill(childPid, 'SIGKILL');
    await sup.waitForJob(waiting, 'QUEUED');
    await waitFor('the crashed attempt’s span', () => ofJob(spans(), running).find((span) => span.pid === sup.pid));
    expect(ofJob(spans(), waiting).map((span) => span.kind)).toEqual([KIND.PRODUCER]);
    await stop();
  });

  it('ends the attempt span of a job whose holder went silent elsewhere, from the sweep that takes it back', async () => {
    const { sup, stop, spans, request } = await traced();
    const id = await request(null, 'elsewhere');
    const [claimed] = await claimJobs(sup.queue.store, {
      classes: ['elsewhere'],
      ownerId: 'other-host:1/elsewhere.0.1',
      limit: 1,
      leaseMs: 1_000,
    });
    await sup.queue.store.jobStart({ id, leaseToken: claimed!.leaseToken, leaseMs: 1_000 });
    const expired = await waitFor('the expired attempt’s span', () =>
      ofJob(spans(), id).find((span) => span.kind === KIND.CONSUMER),
    );
    const send = ofJob(spans(), id).find((span) => span.kind === KIND.PRODUCER)!;
    expect(expired).toMatchObject({ traceId: send.traceId, parentSpanId: send.spanId, pid: sup.pid });
    expect(expired.status.code).toBe(STATUS_ERROR);
    expect(expired.attributes).toMatchObject({ 'error.type': 'LEASE:EXPIRED', 'leasehold.job.outcome': 'expired' });
    await stop();
  });

  it('ends the attempt span of a job released by a kill on shutdown, with no error', async () => {
    const { sup, stop, spans, hanging } = await traced({ shutdownGraceSeconds: 0.5, heartbeatSeconds: 5 });
    // A handler that blocks its child's loop: the child cannot end its own span before it is killed
    // (on shutdown, long before the 5 s heartbeat would find it unresponsive).
    const { id } = await hanging({ spin: true });
    await stop();
    const released = ofJob(spans(), id).find((span) => span.kind === KIND.CONSUMER);
    expect(released).toMatchObject({ pid: sup.pid, status: { code: STATUS_UNSET } });
    expect(released!.attributes).toMatchObject({
      'leasehold.job.outcome': 'released',
      'leasehold.job.release_reason': 'shutdown',
    });
  });

  it('exports a child’s batched spans before the child exits on drain', async () => {
    const { sup, stop } = await traced({ batched: true });
    const { id } = await sup.queue.enqueue({ class: 'traced' });
    await sup.queue.waitFor(id, { timeoutMs: 20_000 });
    expect(ofJob(spansIn(path.join(sup.dir, 'spans.jsonl')), id)).toEqual([]);
    await stop();
    const [attempt] = ofJob(spansIn(path.join(sup.dir, 'spans.jsonl')), id);
    expect(attempt).toMatchObject({ name: 'process traced', attributes: { 'leasehold.job.outcome': 'succeeded' } });
  });

  it('opens a send span for the CLI’s enqueue and for a schedule’s occurrence, each job storing its context', async () => {
    const { sup, stop, env, spans } = await traced({ schedules: [{ name: 'tick', cron: '* * * * * *' }] });
    const cli = await execa('node', [LEASEHOLD_BIN, 'enqueue', 'traced', '--json', '--config', sup.configFile], {
      env,
      cwd: sup.dir,
    });
    const { id } = JSON.parse(cli.stdout) as { id: number };
    const scheduled = await waitFor('a scheduled occurrence’s send span', () =>
      spans().find((span) => span.kind === KIND.PRODUCER && span.pid === sup.pid),
    );
    const sent = await waitFor('the CLI’s send span', () =>
      ofJob(spans(), id).find((span) => span.kind === KIND.PRODUCER),
    );
    expect(sent.pid).not.toBe(sup.pid);
    for (const send of [sent, scheduled]) {
      const jobId = Number(send.attributes['messaging.message.id']);
      const attempt = await waitFor(`job ${jobId}'s attempt span`, () =>
        ofJob(spans(), jobId).find((span) => span.kind === KIND.CONSUMER),
      );
      expect(attempt).toMatchObject({ traceId: send.traceId, parentSpanId: send.spanId });
    }
    await stop();
  });

  it('joins the trace a TRACEPARENT (and TRACESTATE) in its environment names, for the CLI’s enqueue', async () => {
    const { sup, stop, env, spans } = await traced();
    const [traceId, spanId] = ['4bf92f3577b34da6a3ce929d0e0e4736', '00f067aa0ba902b7'];
    const cli = await execa('node', [LEASEHOLD_BIN, 'enqueue', 'traced', '--json', '--config', sup.configFile], {
      env: { ...env, TRACEPARENT: `00-${traceId}-${spanId}-01`, TRACESTATE: 'vendor=1' },
      cwd: sup.dir,
    });
    const { id } = JSON.parse(cli.stdout) as { id: number };
    const send = await waitFor('the CLI’s send span', () =>
      ofJob(spans(), id).find((span) => span.kind === KIND.PRODUCER),
    );
    expect(send).toMatchObject({ traceId, parentSpanId: spanId });
    const attempt = await waitFor('the attempt span', () =>
      ofJob(spans(), id).find((span) => span.kind === KIND.CONSUMER),
    );
    expect(attempt).toMatchObject({ traceId, parentSpanId: send.spanId });
    await stop();
  });
});
