/** Defaults shared by the library, the CLI and the config. */
export const DEFAULT_PAYLOAD_LIMIT_BYTES = 1024 * 1024;
export const DEFAULT_MAX_RETRIES = 5;
export const MAX_PRIORITY = 1_000_000;
