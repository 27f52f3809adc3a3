/**
 * The package's entry, `leasehold`: the library (src/index.ts) and the
 * supervisor started from code (supervisor/start.ts, whose modules load
 * only when it starts one). It sits above both layers, which never import
 * each other this way.
 */
export * from './src/index.js';
export { startSupervisor, type RunningSupervisor, type StartSupervisorOptions } from './supervisor/start.js';
