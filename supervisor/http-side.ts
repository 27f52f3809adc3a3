/**
 * What a config's `http:` adds to a supervisor: its metrics, /metrics and
 * /healthz, and the dashboard when `http.dashboard` is on. main.ts loads this
 * module only when the config has `http`: prom-client and the dashboard's
 * server (Hono) are a third of a supervisor's start-up without it.
 */
import type { ClassConfig, LeaseholdConfig } from '../src/config/schema.js';
import { TOKEN_ENV } from '../src/config/exposure.js';
import { checkListenAddress } from '../src/dashboard/security.js';
import { dashboardListener } from '../src/dashboard/server.js';
import type { Logger } from '../src/log.js';
import type { SchedulerStore } from '../src/store/schedules.js';
import type { OperatorStore, SupervisorStore } from '../src/store/types.js';
import { HttpServer, type Unhealthy } from './http-server.js';
import { SupervisorMetrics } from './metrics.js';

export interface HttpSideDeps {
  config: LeaseholdConfig & { http: NonNullable<LeaseholdConfig['http']> };
  store: SupervisorStore & OperatorStore & SchedulerStore;
  supervisorId: string;
  logger: Logger;
  /** The classes in force (a reload changes them). */
  classes: () => readonly ClassConfig[];
  unhealthy: () => Promise<Unhealthy | undefined>;
}

export function httpSide(deps: HttpSideDeps): { metrics: SupervisorMetrics; http: HttpServer } {
  const { config, store, supervisorId, logger } = deps;
  const metrics = new SupervisorMetrics({ store, supervisorId, classes: deps.classes });
  const http = new HttpServer({
    ...config.http,
    registry: metrics.registry,
    logger,
    unhealthy: deps.unhealthy,
    dashboard: dashboard(deps),
  });
  return { metrics, http };
}

/** The dashboard's pages on the HTTP port, when `http.dashboard` is on (a token from the environment; none: loopback only). */
function dashboard({ config, store, logger }: HttpSideDeps) {
  if (config.http.dashboard !== true) return undefined;
  const token = process.env[TOKEN_ENV] || undefined;
  checkListenAddress(config.http.host, token);
  return dashboardListener({
    store,
    database: config.database,
    classes: config.classes,
    payloadLimitBytes: config.payload_limit_bytes,
    readOnly: false,
    token,
    logger,
  });
}
