/** Where the dashboard may listen: a rule of the config check (`http.dashboard`) and of `leasehold dashboard` alike. */

/** The environment variable that gives the dashboard's token when no `--token` does. */
export const TOKEN_ENV = 'LEASEHOLD_DASHBOARD_TOKEN';

const TOKEN_MIN_LENGTH = 16;

/** Why a token cannot be used, or undefined. */
export function tokenProblem(token: string): string | undefined {
  if (token.length >= TOKEN_MIN_LENGTH && !/\s/.test(token)) return undefined;
  return `the dashboard token must be at least ${TOKEN_MIN_LENGTH} characters without spaces (try: openssl rand -hex 16)`;
}

export function isLoopback(host: string): boolean {
  const name = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  return name === 'localhost' || name === '::1' || /^127(\.\d{1,3}){3}$/.test(name);
}

/** An address other than loopback needs a token: anyone who reaches it could act on the queue. Undefined: allowed. */
export function exposureProblem(host: string, token: string | undefined): string | undefined {
  if (token !== undefined || isLoopback(host)) return undefined;
  return `the dashboard listens on ${host} only with a token (set ${TOKEN_ENV}, or give leasehold dashboard --token); without one, only on a loopback address such as 127.0.0.1`;
}
