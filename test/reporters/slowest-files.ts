/**
 * A vitest reporter that prints the slowest test files at the end of a run,
 * beside the default reporter, so that the next slow file is seen the day it
 * appears.
 */
import type { Reporter, TestModule } from 'vitest/node';

const SHOWN = 10;

/** What the file cost the run: setting up, importing it, and its tests and hooks. */
function fileMs(testModule: TestModule): number {
  const { environmentSetupDuration, prepareDuration, collectDuration, setupDuration, duration } =
    testModule.diagnostic();
  return environmentSetupDuration + prepareDuration + collectDuration + setupDuration + duration;
}

export default class SlowestFiles implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const slowest = testModules
      .map((testModule) => ({ file: testModule.relativeModuleId, ms: fileMs(testModule) }))
      .sort((a, b) => b.ms - a.ms)
      .slice(0, SHOWN);
    if (slowest.length === 0) return;
    const lines = slowest.map(({ file, ms }) => `${(ms / 1000).toFixed(1).padStart(8)} s  ${file}`);
    process.stdout.write(`\n slowest test files (${slowest.length} of ${testModules.length})\n${lines.join('\n')}\n`);
  }
}
