import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

/**
 * Prometheus metrics (prom-client), one registry per process: turns by system and outcome,
 * turn and model-call latency, open event streams, database pool, errors. GET /metrics exposes
 * them (http/observability/routes.ts); the database gauges are read at scrape time.
 */
export const registry = new Registry();
// prom-client's default names already start with process_ / nodejs_: the prefix is ds_ alone
// (ds_process_cpu_seconds_total, ds_nodejs_heap_size_used_bytes), not ds_process_process_*.
collectDefaultMetrics({ register: registry, prefix: "ds_" });

const SECONDS = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 40, 60, 120];

export const metrics = {
  turns: new Counter({
    name: "ds_turns_total",
    help: "Finished turns by system and outcome",
    labelNames: ["system", "outcome"],
    registers: [registry],
  }),
  turnSeconds: new Histogram({
    name: "ds_turn_duration_seconds",
    help: "Turn latency, request to done",
    labelNames: ["system"],
    buckets: SECONDS,
    registers: [registry],
  }),
  turnPhaseSeconds: new Histogram({
    name: "ds_turn_phase_seconds",
    help: "Where a streamed turn's time goes: admit (request to its run stored, incl. waiting for a database connection), first_token (run stored to the first token sent), commit (the turn's commit statement, incl. waiting for a connection)",
    labelNames: ["system", "phase"],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  }),
  modelCalls: new Counter({
    name: "ds_model_calls_total",
    help: "Model calls by role, model and outcome",
    labelNames: ["role", "model", "outcome"],
    registers: [registry],
  }),
  modelSeconds: new Histogram({
    name: "ds_model_call_duration_seconds",
    help: "Model call latency (all attempts)",
    labelNames: ["role", "model"],
    buckets: SECONDS,
    registers: [registry],
  }),
  modelTokens: new Counter({
    name: "ds_model_tokens_total",
    help: "Tokens reported by the provider",
    labelNames: ["role", "model", "kind"],
    registers: [registry],
  }),
  modelRetries: new Counter({
    name: "ds_model_retries_total",
    help: "Model calls that needed the retry",
    labelNames: ["role", "model"],
    registers: [registry],
  }),
  sseWrites: new Counter({
    name: "ds_sse_writes_total",
    help: "Writes of event-stream text to a client's socket (events sent together share one)",
    registers: [registry],
  }),
  sseWriteWaitSeconds: new Histogram({
    name: "ds_sse_write_wait_seconds",
    help: "Socket back-pressure: how long an event-stream write waited for a slow client's socket to drain (only writes that waited)",
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
    registers: [registry],
  }),
  openStreams: new Gauge({
    name: "ds_open_streams",
    help: "Event streams (SSE) open now",
    labelNames: ["kind"],
    registers: [registry],
  }),
  httpRequests: new Counter({
    name: "ds_http_requests_total",
    help: "HTTP requests by route and status",
    labelNames: ["method", "route", "status"],
    registers: [registry],
  }),
  errors: new Counter({
    name: "ds_errors_total",
    help: "Errors by where and code",
    labelNames: ["where", "code"],
    registers: [registry],
  }),
  dbPoolMax: new Gauge({
    name: "ds_db_pool_max_connections",
    help: "Connections the pool may open",
    labelNames: ["backend"],
    registers: [registry],
  }),
  dbConnections: new Gauge({
    name: "ds_db_connections",
    help: "This application's server connections by state (pg_stat_activity; PostgreSQL server only)",
    labelNames: ["state"],
    registers: [registry],
  }),
  dbUp: new Gauge({ name: "ds_db_up", help: "1 when the last readiness query succeeded", registers: [registry] }),
  dbPingSeconds: new Gauge({
    name: "ds_db_ping_seconds",
    help: "Latency of the last readiness query",
    registers: [registry],
  }),
};
