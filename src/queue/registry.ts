/** The worker registry's timing, shared by the supervisor that writes its row and the reports that judge it. */

/** How often a supervisor refreshes its own row in `workers`. */
export const SUPERVISOR_HEARTBEAT_MS = 2_000;
/** A supervisor row not refreshed for this long belongs to a supervisor that is gone or stuck. */
export const STALE_SUPERVISOR_MS = 3 * SUPERVISOR_HEARTBEAT_MS;
