import { setTimeout as sleep } from 'node:timers/promises';
import { commandLine, descendants, listProcesses, readStat, type ProcStat } from '../proc.js';

/** A process of the run: its pid, its start (a later process with the same pid is someone else) and how we learned of it. */
export interface NotedProcess {
  pid: number;
  startTicks: number;
  origin: string;
}

/** A process seen to die (killed, or ended without its supervisor): it may have died in the middle of a write. */
export interface NotedDeath {
  pid: number;
  /** Its start, when the witness knew it (the supervisors' log names only the pid). */
  startTicks: number | undefined;
  /** When it died, or later (ms): none of its records is later. */
  at: number;
  how: string;
}

export interface Survivor extends NotedProcess {
  command: string;
}

/**
 * Every process the run started or saw, checked in /proc rather than in the
 * queue's own tables: the supervisors the chaos program started, what the
 * handlers recorded (their child's pid, their subprocesses) and whatever
 * descended from the supervisors when the program looked. At the end none of
 * them, and nothing they spawned, may still run. It also keeps the deaths
 * the run saw, by which the effects reader excuses a torn last record.
 */
export class ProcessLedger {
  private readonly noted = new Map<string, NotedProcess>();
  private readonly deaths: NotedDeath[] = [];

  /** Note a process whose start someone else read (a handler, about itself or a subprocess). */
  note(pid: number, startTicks: number, origin: string): void {
    const key = `${pid}:${startTicks}`;
    if (!this.noted.has(key)) this.noted.set(key, { pid, startTicks, origin });
  }

  /** Note a process by pid, reading its start now. One already gone is not noted: it cannot outlive anything. */
  notePid(pid: number, origin: string): void {
    const stat = readStat(pid);
    if (stat !== undefined) this.note(pid, stat.startTicks, origin);
  }

  /** Note every process that descends from `pid` now (a supervisor's children and whatever they started). */
  noteDescendants(pid: number, origin: string): void {
    for (const stat of descendants(listProcesses(), [pid]))
      this.note(stat.pid, stat.startTicks, `${origin} (${stat.comm})`);
  }

  /** Note that a process died: the chaos program killed it, its supervisor saw it end on a signal, or its supervisor was killed. */
  noteDeath(death: NotedDeath): void {
    this.deaths.push(death);
  }

  /**
   * A death of the process `pid` started at `startTicks` that came after
   * `lastSeen` (ms), its last sign of life: a death before it was of an
   * earlier process with the pid.
   */
  deathOf(pid: number, startTicks: number, lastSeen: number): NotedDeath | undefined {
    return this.deaths.find(
      (death) =>
        death.pid === pid &&
        (death.startTicks === undefined || death.startTicks === startTicks) &&
        death.at >= lastSeen,
    );
  }

  /** Note as dead the processes of `family` that are gone now; `how` says how they died. */
  noteDeathsOf(family: ProcessLedger, how: string): void {
    const at = Date.now();
    for (const noted of family.noted.values())
      if (readStat(noted.pid)?.startTicks !== noted.startTicks)
        this.noteDeath({ pid: noted.pid, startTicks: noted.startTicks, at, how });
  }

  get size(): number {
    return this.noted.size;
  }

  /**
   * The noted processes still running, and everything that belongs to them:
   * members of the process groups and sessions they lead (a child is a group
   * leader, and its handler's subprocesses are in its group; a pid is never
   * reused while a group or session of that id has members, so members of a
   * dead leader's group are still that leader's), and their descendants.
   */
  survivors(): Survivor[] {
    const running = listProcesses();
    const byPid = new Map(running.map((stat) => [stat.pid, stat]));
    const isSame = (noted: NotedProcess) => byPid.get(noted.pid)?.startTicks === noted.startTicks;
    // A leader whose pid now names another process leads nothing of ours.
    const leaders = new Map<number, NotedProcess>();
    for (const noted of this.noted.values()) if (!byPid.has(noted.pid) || isSame(noted)) leaders.set(noted.pid, noted);

    const found = new Map<number, Survivor>();
    const add = (stat: ProcStat, origin: string) => {
      if (stat.pid !== process.pid && !found.has(stat.pid))
        found.set(stat.pid, { pid: stat.pid, startTicks: stat.startTicks, origin, command: commandLine(stat.pid) });
    };
    for (const noted of this.noted.values()) if (isSame(noted)) add(byPid.get(noted.pid)!, noted.origin);
    for (const stat of running) {
      const leader = leaders.get(stat.pgrp) ?? leaders.get(stat.session);
      if (leader !== undefined) add(stat, `in the group or session of ${leader.origin} ${leader.pid}`);
    }
    for (const stat of descendants(running, [...found.keys()]))
      add(stat, `descendant of ${found.get(stat.ppid)?.origin ?? 'a survivor'} ${stat.ppid}`);
    return [...found.values()];
  }

  /** Wait until no survivor is left; returns those still there at the deadline. */
  async waitUntilGone(timeoutMs: number): Promise<Survivor[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const left = this.survivors();
      if (left.length === 0 || Date.now() > deadline) return left;
      await sleep(100);
    }
  }
}

/** SIGKILL survivors that are still the processes they were (never a later process that took a pid). */
export function killSurvivors(survivors: Survivor[]): void {
  for (const survivor of survivors) {
    if (readStat(survivor.pid)?.startTicks !== survivor.startTicks) continue;
    try {
      process.kill(survivor.pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
}
