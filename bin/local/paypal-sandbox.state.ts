/**
 * What the PayPal imitation remembers: batches (kept in a file across restarts when asked),
 * issued tokens, injected faults and request counters. Tokens and faults live in memory only: a
 * restart invalidates every token, as PayPal would after its tokens expire.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export type ItemStatus = 'SUCCESS' | 'FAILED' | 'PENDING' | 'UNCLAIMED' | 'RETURNED' | 'ONHOLD' | 'BLOCKED' | 'REFUNDED' | 'REVERSED';
export type SandboxRoute = 'token' | 'create' | 'get-batch' | 'get-item' | 'capture' | 'get-refund';

export interface SandboxItem {
  payoutItemId: string;
  transactionId: string;
  status: ItemStatus;
  recipientType: string;
  receiver: string;
  amount: { value: string; currency: string };
  senderItemId: string | undefined;
  note: string | undefined;
}

export interface SandboxBatch {
  payoutBatchId: string;
  senderBatchId: string;
  emailSubject: string | undefined;
  emailMessage: string | undefined;
  createdAt: string;
  items: SandboxItem[];
}

export class SandboxState {
  private readonly tokens = new Map<string, number>();
  private readonly batchesById = new Map<string, SandboxBatch>();
  private readonly idBySender = new Map<string, string>();
  private readonly faults = new Map<SandboxRoute, { n: number; status: number }>();
  private issued = 0;
  private creates = 0;

  /** `stateFile`: where batches are kept across restarts; in memory when unset. */
  constructor(private readonly stateFile?: string) {
    if (stateFile && existsSync(stateFile)) {
      for (const batch of JSON.parse(readFileSync(stateFile, 'utf8')) as SandboxBatch[]) this.index(batch);
    }
  }

  /** How many tokens were issued. */
  tokensIssued(): number {
    return this.issued;
  }

  /** How many create-payout requests got past authentication and faults. */
  createRequests(): number {
    return this.creates;
  }

  countCreate(): void {
    this.creates += 1;
  }

  saveToken(token: string, expiresAt: number): void {
    this.tokens.set(token, expiresAt);
    this.issued += 1;
  }

  tokenValid(token: string | undefined, now = Date.now()): boolean {
    const expires = token ? this.tokens.get(token) : undefined;
    return expires !== undefined && expires > now;
  }

  revokeTokens(): void {
    this.tokens.clear();
  }

  batches(): SandboxBatch[] {
    return [...this.batchesById.values()];
  }

  batch(payoutBatchId: string): SandboxBatch | undefined {
    return this.batchesById.get(payoutBatchId);
  }

  batchBySenderId(senderBatchId: string): SandboxBatch | undefined {
    const id = this.idBySender.get(senderBatchId);
    return id ? this.batchesById.get(id) : undefined;
  }

  item(payoutItemId: string): { batch: SandboxBatch; item: SandboxItem } | undefined {
    for (const batch of this.batchesById.values()) {
      const item = batch.items.find((i) => i.payoutItemId === payoutItemId);
      if (item) return { batch, item };
    }
    return undefined;
  }

  addBatch(batch: SandboxBatch): void {
    this.index(batch);
    this.persist();
  }

  setItemStatus(payoutBatchId: string, status: ItemStatus): void {
    const batch = this.batchesById.get(payoutBatchId);
    if (!batch) throw new Error(`no batch ${payoutBatchId}`);
    for (const item of batch.items) item.status = status;
    this.persist();
  }

  failNext(route: SandboxRoute, n: number, status: number): void {
    this.faults.set(route, { n, status });
  }

  /** The status to answer instead of serving `route`, when a fault is pending for it (and uses it up). */
  takeFault(route: SandboxRoute): number | undefined {
    const fault = this.faults.get(route);
    if (!fault || fault.n <= 0) return undefined;
    fault.n -= 1;
    return fault.status;
  }

  private index(batch: SandboxBatch): void {
    this.batchesById.set(batch.payoutBatchId, batch);
    this.idBySender.set(batch.senderBatchId, batch.payoutBatchId);
  }

  private persist(): void {
    if (!this.stateFile) return;
    mkdirSync(dirname(this.stateFile), { recursive: true });
    // Through a temporary file: a crash mid-write must not leave half a JSON file to restart from.
    writeFileSync(`${this.stateFile}.tmp`, JSON.stringify(this.batches(), null, 2));
    renameSync(`${this.stateFile}.tmp`, this.stateFile);
  }
}
