/** The service's log lines as tests read them. */
import { logger } from '../../functions/observability/logger';

/**
 * The ERROR log lines (message and attributes) the service wrote while `work` ran: what the alarms'
 * metric filters count (lib/monitoring.ts). The logger is silent in tests; this listens on it.
 */
export async function errorLines(work: () => Promise<unknown>): Promise<{ message: string; attributes: Record<string, unknown> }[]> {
  const lines: { message: string; attributes: Record<string, unknown> }[] = [];
  const spy = jest.spyOn(logger(), 'error').mockImplementation((message: unknown, ...rest: unknown[]) => {
    lines.push({ message: String(message), attributes: Object.assign({}, ...rest.filter((r) => typeof r === 'object')) });
  });
  try {
    await work();
  } finally {
    spy.mockRestore();
  }
  return lines;
}
