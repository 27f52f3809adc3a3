/** `leasehold pause <class>` / `resume <class>`: a paused class claims nothing, on every host, until it is resumed. */
import { isPaused, pauseClass, resumeClass } from '../../queue/controls.js';
import {
  classConfig,
  CLI_ACTOR,
  defineCommand,
  output,
  resolveTarget,
  unknownClassError,
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
 * A command on one class of the config. The class is checked before the
 * database is opened, so an unknown one writes nothing. Without --config
 * there is no list to check against: bad input too. `resume` also takes a
 * class that is paused but no longer in the config, so a pause can always
 * be undone.
 */
function defineClassCommand(spec: {
  command: string;
  describe: string;
  acceptPaused: boolean;
  run: (jobClass: string, ctx: Context) => Promise<void>;
}): Command {
  return defineCommand<ClassArgs>({
    command: `${spec.command} <class>`,
    describe: spec.describe,
    positionals: { class: { type: 'string', describe: 'a class of the config' } },
    run: async (args) => {
      const target = await resolveTarget(args);
      const known = classConfig(target.config, args.class) !== undefined;
      if (!known && !spec.acceptPaused) throw unknownClassError(args.class, target.config);
      await withStore(target, args, { create: false }, async (ctx) => {
        if (!known && !(await isPaused(ctx.store, args.class))) throw unknownClassError(args.class, target.config);
        await spec.run(args.class, ctx);
      });
    },
  });
}

export const pauseCommand = defineClassCommand({
  command: 'pause',
  describe: 'stop claiming jobs of a class on every host (running jobs finish); stored in the database',
  acceptPaused: false,
  run: async (jobClass, { store, json, clock }) => {
    const result = await pauseClass(store, jobClass, CLI_ACTOR);
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
  acceptPaused: true,
  run: async (jobClass, { store, json }) => {
    const result = await resumeClass(store, jobClass, CLI_ACTOR);
    output(json, result, () =>
      result.outcome === 'resumed' ? `class ${jobClass} resumed` : `class ${jobClass} was not paused`,
    );
  },
});
