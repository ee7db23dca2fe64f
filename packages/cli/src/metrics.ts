import type { MetricsSnapshot, PantaMetrics } from '@panta/report';

/** `--metrics-port P [--metrics-host H]` of a role: its /metrics on its own port, or nothing when no port is given. */
export interface MetricsFlags {
  metricsPort?: number;
  metricsHost?: string;
}

export interface RoleMetrics {
  observe(sweep: string, snapshot: MetricsSnapshot): void;
  close(): Promise<void>;
}

const NONE: RoleMetrics = { observe: () => undefined, close: async () => undefined };

/** Starts serving /metrics for `role` when a port is given (the report package is imported only then). */
export async function startRoleMetrics(role: string, flags: MetricsFlags): Promise<RoleMetrics> {
  if (flags.metricsPort === undefined) return NONE;
  const { PantaMetrics, serveMetrics } = await import('@panta/report');
  const metrics: PantaMetrics = new PantaMetrics(role);
  const served = await serveMetrics(metrics, flags.metricsPort, flags.metricsHost ?? '127.0.0.1');
  process.stderr.write(`panta ${role}: metrics at ${served.url}metrics\n`);
  return { observe: (sweep, s) => metrics.observe(sweep, s), close: () => served.close() };
}
