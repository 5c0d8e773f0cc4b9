/**
 * leader_election_master_status{name}: 1 while this process leads the lease
 * `name`, 0 otherwise (client-go leaderelection metrics).
 */
import { Gauge, register as defaultRegistry, type Registry } from 'prom-client';

export const LEADER_ELECTION_MASTER_STATUS = 'leader_election_master_status';

const gauges = new WeakMap<Registry, Gauge<'name'>>();

/** The gauge registered on `registry` (created once per registry). */
export function masterStatusGauge(registry: Registry = defaultRegistry): Gauge<'name'> {
  let g = gauges.get(registry);
  if (!g) {
    const existing = registry.getSingleMetric(LEADER_ELECTION_MASTER_STATUS);
    g =
      (existing as Gauge<'name'> | undefined) ??
      new Gauge({
        name: LEADER_ELECTION_MASTER_STATUS,
        help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
        labelNames: ['name'],
        registers: [registry],
      });
    gauges.set(registry, g);
  }
  return g;
}
