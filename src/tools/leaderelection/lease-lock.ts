/**
 * A coordination.k8s.io/v1 Lease as a leader election lock (client-go
 * tools/leaderelection/resourcelock/leaselock.go).
 */
import type { Lease } from 'kubernetes-types/coordination/v1.js';
import { GVR } from '../../api/gvr.js';
import type { KubeObject } from '../../api/types.js';
import type { Client } from '../../client/interfaces.js';
import { rfc3339Micro } from '../../util/clock/clock.js';

/** What the lock records. Times are epoch ms (MicroTime on the wire). */
export interface LeaderElectionRecord {
  holderIdentity: string;
  leaseDurationSeconds: number;
  acquireTime?: number;
  renewTime?: number;
  leaderTransitions: number;
}

export interface LeaseLockConfig {
  namespace: string;
  name: string;
  /** This candidate's identity (defaultIdentity() gives `<hostname>_<uuid>`). */
  identity: string;
}

export interface ResourceLock {
  readonly identity: string;
  /** `namespace/name`. */
  describe(): string;
  /** The current record and its raw form (to detect changes); rejects with NotFound when there is no lock. */
  get(): Promise<{ record: LeaderElectionRecord; raw: string }>;
  create(record: LeaderElectionRecord): Promise<void>;
  /** Writes over the lock last read or written (Conflict when it changed since). */
  update(record: LeaderElectionRecord): Promise<void>;
}

type LeaseObject = Lease & KubeObject;

function parseMicro(s: string | undefined): number | undefined {
  if (!s) return undefined;
  const v = Date.parse(s);
  return Number.isNaN(v) ? undefined : v;
}

export function leaseSpecToRecord(lease: Lease): LeaderElectionRecord {
  const spec = lease.spec ?? {};
  const rec: LeaderElectionRecord = {
    holderIdentity: spec.holderIdentity ?? '',
    leaseDurationSeconds: spec.leaseDurationSeconds ?? 0,
    leaderTransitions: spec.leaseTransitions ?? 0,
  };
  const acquire = parseMicro(spec.acquireTime);
  const renew = parseMicro(spec.renewTime);
  if (acquire !== undefined) rec.acquireTime = acquire;
  if (renew !== undefined) rec.renewTime = renew;
  return rec;
}

export function recordToLeaseSpec(rec: LeaderElectionRecord): NonNullable<Lease['spec']> {
  const spec: Record<string, unknown> = {
    holderIdentity: rec.holderIdentity,
    leaseDurationSeconds: rec.leaseDurationSeconds,
    leaseTransitions: rec.leaderTransitions,
  };
  if (rec.acquireTime !== undefined) spec.acquireTime = rfc3339Micro(rec.acquireTime);
  if (rec.renewTime !== undefined) spec.renewTime = rfc3339Micro(rec.renewTime);
  return spec as NonNullable<Lease['spec']>;
}

class LeaseLock implements ResourceLock {
  private lease: LeaseObject | undefined;
  constructor(
    private readonly client: Client,
    private readonly config: LeaseLockConfig,
  ) {}

  get identity(): string {
    return this.config.identity;
  }

  describe(): string {
    return `${this.config.namespace}/${this.config.name}`;
  }

  private leases() {
    return this.client.resource<LeaseObject>(GVR.leases).namespace(this.config.namespace);
  }

  async get(): Promise<{ record: LeaderElectionRecord; raw: string }> {
    const lease = await this.leases().get(this.config.name);
    this.lease = lease;
    const record = leaseSpecToRecord(lease);
    return { record, raw: JSON.stringify(record) };
  }

  async create(record: LeaderElectionRecord): Promise<void> {
    this.lease = await this.leases().create({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: this.config.name, namespace: this.config.namespace },
      spec: recordToLeaseSpec(record),
    });
  }

  async update(record: LeaderElectionRecord): Promise<void> {
    if (!this.lease) throw new Error('lease not initialized, call get or create first');
    const next: LeaseObject = { ...this.lease, spec: recordToLeaseSpec(record) };
    this.lease = await this.leases().update(next);
  }
}

export function newLeaseLock(client: Client, config: LeaseLockConfig): ResourceLock {
  return new LeaseLock(client, config);
}
