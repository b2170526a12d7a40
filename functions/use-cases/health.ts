import { Refusal } from '../messages/refusal';
import { pingTable } from '../store/health.repository';

/** The table answers a strongly consistent read; 503 `tableUnreachable` (not a crash) when it does not. */
export async function checkHealth(): Promise<'ok'> {
  try {
    await pingTable();
  } catch (error) {
    throw new Refusal('tableUnreachable', [], { cause: error });
  }
  return 'ok';
}
