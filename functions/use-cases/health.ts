import type { ApiResult } from '../contracts/api';
import { Refusal } from '../messages/refusal';
import { pingTable } from '../store/health.repository';

/** 200 when the table answers a strongly consistent read; 503 (not a crash) when it does not. */
export async function checkHealth(): Promise<ApiResult> {
  try {
    await pingTable();
  } catch (error) {
    throw new Refusal('tableUnreachable', [], { cause: error });
  }
  return { statusCode: 200, body: { status: 'ok' } };
}
