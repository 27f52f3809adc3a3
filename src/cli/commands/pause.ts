/** `leasehold pause <class>` / `resume <class>`: a paused class claims nothing, on every host, until it is resumed. */
import { pauseClass, resumeClass } from '../../queue/controls.js';
import {
  CLI_ACTOR,
  defineCommand,
  output,
  resolveTarget,
  withStore,
  type Command,
  type Context,
  type GlobalArgs,
} from '../context.js';
import { formatWhen } from '../format.js';

interface ClassArgs extends GlobalArgs {
  class: string;
}

/**
 * A command on one class: one the config names (--config), one a supervisor
 * has served on the database, or one with a pause on record (so a pause can
 * always be undone). Anything else is refused with the closest known name,
 * nothing written.
 */
function defineClassCommand(spec: {
  command: string;
  describe: string;
  run: (jobClass: string, ctx: Context, known: string[]) => Promise<void>;
}): Command {
  return defineCommand<ClassArgs>({
    command: `${spec.command} <class>`,
    describe: spec.describe,
    positionals: { class: { type: 'string', describe: 'a class of the config, or one a supervisor has served' } },
    run: async (args) => {
      const target = await resolveTarget(args);
      const known = (target.config?.classes ?? []).map((cls) => cls.name);
      await withStore(target, args, { create: false }, (ctx) => spec.run(args.class, ctx, known));
    },
  });
}

export const pauseCommand = defineClassCommand({
  command: 'pause',
  describe: 'stop claiming jobs of a class on every host (running jobs finish); stored in the database',
  run: async (jobClass, { store, json, clock }, known) => {
    const result = await pauseClass(store, jobClass, CLI_ACTOR, known);
    const since = `since ${formatWhen(result.paused_at, clock.now())}, by ${result.paused_by ?? '-'}`;
    output(json, result, () =>
      result.outcome === 'paused'
        ? `class ${jobClass} paused: no job of it starts until \`resume ${jobClass}\` (running jobs finish)`
        : `class ${jobClass} was already paused (${since})`,
    );
  },
});

export const resumeCommand = defineClassCommand({
  command: 'resume',
  describe: 'let a paused class claim jobs again',
  run: async (jobClass, { store, json }, known) => {
    const result = await resumeClass(store, jobClass, CLI_ACTOR, known);
    output(json, result, () =>
      result.outcome === 'resumed' ? `class ${jobClass} resumed` : `class ${jobClass} was not paused`,
    );
  },
});
