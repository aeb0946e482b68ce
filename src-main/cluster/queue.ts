// Batches on a durable queue (DESIGN §12): one pg-boss job per (task, sample) in the shared Postgres, worked
// by every node with a runtime up to its concurrency. pg-boss (a maintained Postgres job queue) rather than
// BullMQ: the jobs live in the same database as the batch, so they are written in the batch's own
// transaction, and a dead node is found by our own heartbeat (rollgate_nodes), not Redis.
//
// `rollgate_batch_samples` is the ledger that makes each sample count once: a worker claims a sample
// (attempt + 1, its node, its job), and only the attempt that still holds the claim may mark it done. When
// a node dies, the survivor that recovers it puts the node's claimed samples back to `queued` and fails
// their jobs at once, so pg-boss hands them to another node without waiting for the job heartbeat (10 s,
// pg-boss's floor), which stays as the backstop. Finishing is serialized per batch (an advisory
// transaction lock), so exactly one finishing sample sees that none are left and completes the batch.
import { PgBoss, type Job } from 'pg-boss';
import type pg from 'pg';

export const SAMPLE_QUEUE = 'rollgate-samples';
const BOSS_SCHEMA = 'rollgate_boss';
/** pg-boss refuses less. */
const JOB_HEARTBEAT_S = 10;
/** Retries are for node deaths (a sample's own errors end as a failed sample, never a thrown job). */
const RETRY_LIMIT = 20;

/** pg-boss's SQL executor (its `db` option), as its own types name it. */
type BossDb = NonNullable<NonNullable<Parameters<PgBoss['insert']>[2]>['db']>;

export interface SampleJob<T = unknown> {
  batchId: string;
  taskId: string;
  sampleIndex: number;
  /** The task row and the batch's per-run options: all a node needs besides the stored batch. */
  task: T;
  run: Record<string, unknown>;
}

export interface SampleClaim { batchId: string; taskId: string; sampleIndex: number; attempt: number; jobId: string }

/** What runs one claimed sample: resolves when the sample has ended (its session finished, failed or interrupted). */
export type SampleHandler = (job: SampleJob, claim: SampleClaim, signal: AbortSignal) => Promise<void>;

/** SQL runner inside someone else's transaction (the Postgres store's `batches.createBatch` hands one over). */
export interface SqlExecutor { executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }> }

export class SampleQueue {
  private workerId: string | null = null;

  private constructor(private readonly boss: PgBoss, private readonly db: pg.Pool, private readonly nodeId: string) {}

  static async open(url: string, db: pg.Pool, nodeId: string): Promise<SampleQueue> {
    const boss = new PgBoss({
      connectionString: url, schema: BOSS_SCHEMA, application_name: `rollgate-queue-${nodeId}`, max: 4,
      useListenNotify: true, registerInstance: false, instanceName: nodeId,
      // pg-boss's own supervision (expiry, heartbeat misses) runs often enough to be the backstop.
      superviseIntervalSeconds: 5, monitorIntervalSeconds: 10,
    });
    boss.on('error', (err: Error) => console.error(`rollgate: queue: ${err.message}`));
    await boss.start();
    await boss.createQueue(SAMPLE_QUEUE, { heartbeatSeconds: JOB_HEARTBEAT_S, retryLimit: RETRY_LIMIT, retryDelay: 0, notify: true, deleteAfterSeconds: 7 * 86400 });
    return new SampleQueue(boss, db, nodeId);
  }

  /**
   * Queues every sample of a batch: ledger rows and jobs, inside `db` when given (the transaction that
   * creates the batch row), else in a transaction of its own.
   */
  async enqueue(jobs: SampleJob[], opts: { db?: SqlExecutor; expireInSeconds: number }): Promise<void> {
    const run = async (tx: SqlExecutor) => {
      for (let i = 0; i < jobs.length; i += 500) {
        const part = jobs.slice(i, i + 500);
        await tx.executeSql(
          `INSERT INTO rollgate_batch_samples (batch_id, task_id, sample_index)
           SELECT * FROM unnest($1::text[], $2::text[], $3::int[]) ON CONFLICT DO NOTHING`,
          [part.map((j) => j.batchId), part.map((j) => j.taskId), part.map((j) => j.sampleIndex)],
        );
      }
      await this.boss.insert(SAMPLE_QUEUE, jobs.map((data) => ({ data, expireInSeconds: opts.expireInSeconds })), { db: tx as BossDb });
    };
    if (opts.db) return run(opts.db);
    const client = await this.db.connect();
    try {
      await client.query('BEGIN');
      await run({ executeSql: async (text, values) => ({ rows: (await client.query(text, values)).rows }) });
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  /** Works the queue with up to `concurrency` samples at once on this node. */
  async work(concurrency: number, handler: SampleHandler): Promise<void> {
    this.workerId = await this.boss.work<SampleJob>(SAMPLE_QUEUE, {
      localConcurrency: Math.max(1, concurrency), batchSize: 1, pollingIntervalSeconds: 0.5, notifyPollingIntervalSeconds: 5,
    }, async ([job]: Job<SampleJob>[]) => {
      const claim = await this.claim(job!);
      if (!claim) return; // counted already (a node died after finishing it, before its job completed)
      await handler(job!.data, claim, job!.signal);
    });
  }

  private async claim(job: Job<SampleJob>): Promise<SampleClaim | null> {
    const { batchId, taskId, sampleIndex } = job.data;
    const r = await this.db.query<{ attempt: number }>(
      `UPDATE rollgate_batch_samples SET status = 'running', node_id = $4, job_id = $5, attempt = attempt + 1, session_id = NULL
       WHERE batch_id = $1 AND task_id = $2 AND sample_index = $3 AND status <> 'done' RETURNING attempt`,
      [batchId, taskId, sampleIndex, this.nodeId, job.id],
    );
    const attempt = r.rows[0]?.attempt;
    return attempt === undefined ? null : { batchId, taskId, sampleIndex, attempt, jobId: job.id };
  }

  async setSession(claim: SampleClaim, sessionId: string): Promise<void> {
    await this.db.query(
      `UPDATE rollgate_batch_samples SET session_id = $5 WHERE batch_id = $1 AND task_id = $2 AND sample_index = $3 AND attempt = $4`,
      [claim.batchId, claim.taskId, claim.sampleIndex, claim.attempt, sessionId],
    );
  }

  /**
   * Marks the claimed sample done if this attempt still holds it. `counted` false: it was counted already
   * (a survivor counted this attempt while this node looked dead) or `superseded`: a later attempt holds it
   * (this node was declared dead meanwhile, and the sample runs elsewhere). `remaining`: samples not done yet.
   */
  async finish(claim: SampleClaim): Promise<{ counted: boolean; superseded: boolean; remaining: number }> {
    const client = await this.db.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [claim.batchId]);
      const done = await client.query(
        `UPDATE rollgate_batch_samples SET status = 'done' WHERE batch_id = $1 AND task_id = $2 AND sample_index = $3
         AND attempt = $4 AND node_id = $5 AND status = 'running'`,
        [claim.batchId, claim.taskId, claim.sampleIndex, claim.attempt, this.nodeId],
      );
      const holder = done.rowCount === 1 ? null : (await client.query<{ attempt: number }>(
        'SELECT attempt FROM rollgate_batch_samples WHERE batch_id = $1 AND task_id = $2 AND sample_index = $3',
        [claim.batchId, claim.taskId, claim.sampleIndex])).rows[0];
      const left = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM rollgate_batch_samples WHERE batch_id = $1 AND status <> 'done'`, [claim.batchId]);
      await client.query('COMMIT');
      return { counted: done.rowCount === 1, superseded: !!holder && holder.attempt > claim.attempt, remaining: left.rows[0]!.n };
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  /** A cancelled or failed batch: its samples not started yet are dropped (running ones end by themselves). */
  async dropBatch(batchId: string): Promise<void> {
    await this.db.query(`UPDATE rollgate_batch_samples SET status = 'done' WHERE batch_id = $1 AND status = 'queued'`, [batchId]);
  }

  /**
   * A dead node's claimed samples. Those whose session had already ended (the node died between ending the
   * sample and counting it) count now, as that attempt; the others go back to `queued` and their jobs are
   * failed now, so pg-boss retries them on a live node. `drained`: batches that have no sample left now
   * (someone must complete them: nobody else will finish a sample of theirs).
   */
  async recoverNode(nodeId: string): Promise<{ requeued: number; counted: number; drained: string[] }> {
    const ended = await this.db.query<{ batch_id: string; job_id: string | null }>(
      `UPDATE rollgate_batch_samples s SET status = 'done' FROM sessions x
       WHERE s.node_id = $1 AND s.status = 'running' AND x.id = s.session_id AND x.status IN ('finished', 'failed')
       RETURNING s.batch_id, s.job_id`, [nodeId]);
    const endedJobs = ended.rows.map((row) => row.job_id).filter((id): id is string => !!id);
    if (endedJobs.length) await this.boss.complete(SAMPLE_QUEUE, endedJobs);
    const r = await this.db.query<{ job_id: string }>(
      `UPDATE rollgate_batch_samples SET status = 'queued' WHERE node_id = $1 AND status = 'running' RETURNING job_id`, [nodeId]);
    const ids = r.rows.map((row) => row.job_id).filter(Boolean);
    if (ids.length) await this.boss.fail(SAMPLE_QUEUE, ids, { reason: `node ${nodeId} died` });
    const drained: string[] = [];
    for (const batchId of new Set(ended.rows.map((row) => row.batch_id))) {
      const left = await this.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM rollgate_batch_samples WHERE batch_id = $1 AND status <> 'done'`, [batchId]);
      if (left.rows[0]!.n === 0) drained.push(batchId);
    }
    return { requeued: r.rowCount ?? 0, counted: ended.rowCount ?? 0, drained };
  }

  /** Samples of a batch by state (for progress and tests). */
  async counts(batchId: string): Promise<Record<string, number>> {
    const r = await this.db.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM rollgate_batch_samples WHERE batch_id = $1 GROUP BY status`, [batchId]);
    return Object.fromEntries(r.rows.map((row) => [row.status, row.n]));
  }

  /** Stops taking jobs; running handlers get `stopTimeoutMs` to end (then their jobs are left to retry elsewhere). */
  async close(stopTimeoutMs = 10_000): Promise<void> {
    if (this.workerId) await this.boss.offWork(SAMPLE_QUEUE, { id: this.workerId, wait: false }).catch(() => undefined);
    await this.boss.stop({ graceful: true, timeout: stopTimeoutMs, close: true }).catch(() => undefined);
  }
}
