/**
 * Files people upload (task attachments, idea files): written to storage in bounded chunks as
 * they arrive, and held to a per-workspace quota of stored bytes (ATTACHMENT_QUOTA_BYTES).
 * The quota is judged twice: from the declared length before any byte is read, so an upload
 * that cannot fit is refused at once, and again in the transaction that stores the file row,
 * with the workspace locked, so concurrent uploads cannot overrun it together.
 */
import type { Logger } from 'pino';
import { DomainError } from '../../platform/errors.ts';
import type { Metrics } from '../../platform/metrics.ts';
import type { Jobs } from '../jobs/jobs.ts';
import {
  discardUnadopted,
  fileBytesByWorkspace,
  lockWorkspaceFiles,
  stageBlob,
  sweepOrphanBlobs,
  workspaceFileBytes,
  type StagedBlob,
} from '../../storage/blobs.store.ts';

export type { StagedBlob };
import type { Db, Sql } from '../../storage/db.ts';

const MAINTENANCE_QUEUE = 'files-maintenance';
/** A staged upload no file row took over within this long is a leftover (uploads take seconds). */
const ORPHAN_AFTER_SECONDS = 3600;

export class Files {
  /** Uploads refused for want of room since start (for /metrics). */
  refusals = 0;

  constructor(
    private readonly sql: Sql,
    readonly quotaBytes: number,
    jobs: Jobs,
    private readonly log: Logger,
  ) {
    jobs.queue(MAINTENANCE_QUEUE, { retryLimit: 0 });
    jobs.work(MAINTENANCE_QUEUE, () => this.sweep(), { pollingIntervalSeconds: 60 });
    jobs.schedule(MAINTENANCE_QUEUE, '23 * * * *');
  }

  stage(
    workspaceId: string,
    source: AsyncIterable<Buffer> | Iterable<Buffer>,
  ): Promise<StagedBlob> {
    return stageBlob(this.sql, workspaceId, source);
  }

  discard(workspaceId: string, blobId: string): Promise<void> {
    return discardUnadopted(this.sql, workspaceId, blobId);
  }

  /** Before the body: refuses an upload whose declared length would take the workspace past its quota. */
  async admit(workspaceId: string, declaredBytes: number): Promise<void> {
    if (declaredBytes > 0)
      this.judge(await workspaceFileBytes(this.sql, workspaceId), declaredBytes);
  }

  /** In the transaction that stores a file of `bytes`: the final word, the workspace locked until commit. */
  async claimRoom(tx: Db, workspaceId: string, bytes: number): Promise<void> {
    await lockWorkspaceFiles(tx, workspaceId);
    this.judge(await workspaceFileBytes(tx, workspaceId), bytes);
  }

  /** Workspaces storing the most, for /metrics (a bounded number of series). */
  /** Its instruments, read when scraped. */
  registerMetrics(metrics: Metrics): void {
    metrics.total(
      'flowplan_attachment_quota_refusals_total',
      'Uploads refused because the workspace had no room left in ATTACHMENT_QUOTA_BYTES',
      () => this.refusals,
    );
    metrics.gaugeByLabels(
      'flowplan_workspace_file_bytes',
      'Stored file bytes (attachments and idea files) of the 20 workspaces storing the most, against ATTACHMENT_QUOTA_BYTES',
      ['workspace'],
      async () =>
        (await this.largest(20)).map(({ workspaceId, bytes }) => ({
          labels: { workspace: workspaceId },
          value: bytes,
        })),
    );
    metrics.gauge(
      'flowplan_attachment_quota_bytes',
      'ATTACHMENT_QUOTA_BYTES: stored file bytes a workspace may hold',
      () => this.quotaBytes,
    );
  }

  largest(limit: number): Promise<{ workspaceId: string; bytes: number }[]> {
    return fileBytesByWorkspace(this.sql, limit);
  }

  private judge(usedBytes: number, addBytes: number): void {
    if (usedBytes + addBytes <= this.quotaBytes) return;
    this.refusals++;
    throw new DomainError(
      'PAYLOAD_TOO_LARGE',
      `This file would take the workspace past its storage quota of ${this.quotaBytes} bytes`,
      {
        quotaBytes: this.quotaBytes,
        usedBytes,
      },
    );
  }

  private async sweep(): Promise<void> {
    const removed = await sweepOrphanBlobs(this.sql, ORPHAN_AFTER_SECONDS);
    if (removed > 0) this.log.info({ removedChunks: removed }, 'files maintenance');
  }
}
