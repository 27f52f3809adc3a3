import type { ProducerStore } from '../../src/store/types.js';
import type { Zombie } from './damage.js';
import type { Effect } from './effects.js';

/**
 * What the resumed zombies did, counted twice from sources that are not the
 * queue's job columns: the handlers' own records of the writes they tried
 * after being resumed, and the ZOMBIE_WRITE_REJECTED events written under
 * the zombies' tokens.
 */
export interface ZombieEvidence {
  /** Zombies the program resumed after their lease was taken back. */
  resumed: number;
  /** Resumed zombies whose handler recorded a write after resuming. */
  wrote: number;
  /** ... that the store refused with LeaseLostError (the fence). */
  refused_by_store: number;
  /** ... that the child refused before asking the store (it knew its lease was gone). */
  refused_by_child: number;
  /** ... that failed for another reason (the database away). */
  failed: number;
  /** ... that the store took, though sent after the resume: each one a violation. */
  accepted: number;
  /**
   * ... that the store took, sent before the stop and answered after the resume: the fence let it in while the
   * lease was still held (the child was stopped between its query and the answer). Not a zombie's write.
   */
  sent_while_held: number;
  /** Resumed zombies with at least one ZOMBIE_WRITE_REJECTED event under their token. */
  with_rejected_event: number;
  /** ZOMBIE_WRITE_REJECTED events under the resumed zombies' tokens, by operation. */
  rejected_events_by_op: Record<string, number>;
}

export async function gatherZombieEvidence(
  store: ProducerStore,
  zombies: Zombie[],
  effects: Effect[],
): Promise<{ evidence: ZombieEvidence; violations: string[] }> {
  const evidence: ZombieEvidence = {
    resumed: zombies.length,
    wrote: 0,
    refused_by_store: 0,
    refused_by_child: 0,
    failed: 0,
    accepted: 0,
    sent_while_held: 0,
    with_rejected_event: 0,
    rejected_events_by_op: {},
  };
  const violations: string[] = [];
  for (const zombie of zombies) {
    const write = effects.find(
      (e) => e.kind === 'write' && e.lease_token === zombie.leaseToken && e.ts >= zombie.resumedAt,
    );
    if (write !== undefined) {
      evidence.wrote += 1;
      if (write.outcome === 'refused') evidence.refused_by_store += 1;
      else if (write.outcome === 'lost_locally') evidence.refused_by_child += 1;
      else if (write.outcome === 'accepted' && write.sent_at !== undefined && write.sent_at < zombie.resumedAt)
        evidence.sent_while_held += 1;
      else if (write.outcome === 'accepted') {
        evidence.accepted += 1;
        violations.push(
          `job ${zombie.jobId}: pid ${zombie.pid}, resumed with the stale token of attempt ${zombie.attempt}, wrote progress and the store took it`,
        );
      } else evidence.failed += 1;
    }
    const rejected = (await store.eventList({ jobId: zombie.jobId }))
      .filter((event) => event.event === 'ZOMBIE_WRITE_REJECTED')
      .map((event) => JSON.parse(event.detail ?? '{}') as { op?: string; lease_token?: string })
      .filter((detail) => detail.lease_token === zombie.leaseToken);
    if (rejected.length > 0) evidence.with_rejected_event += 1;
    for (const { op = 'unknown' } of rejected)
      evidence.rejected_events_by_op[op] = (evidence.rejected_events_by_op[op] ?? 0) + 1;
  }
  return { evidence, violations };
}
