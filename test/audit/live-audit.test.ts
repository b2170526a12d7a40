/**
 * The daily audit on a live table (functions/audit/live-audit.ts): a run that does not hold is
 * repeated, and the ledger is reported broken only when every attempt finds it broken, never
 * starting an attempt that could not finish in the time left.
 */
import type { LedgerAuditReport } from '../../functions/audit/ledger-audit';
import { auditLiveLedger } from '../../functions/audit/live-audit';

const report = (problems: string[]): LedgerAuditReport => ({ ok: problems.length === 0, problems }) as unknown as LedgerAuditReport;

/** An audit answering the given reports in turn, and what it was asked. */
function scripted(...reports: LedgerAuditReport[]) {
  const calls: { segments?: number }[] = [];
  return {
    calls,
    audit: async (opts: { segments?: number }) => {
      calls.push(opts);
      const next = reports.shift();
      if (!next) throw new Error('no more reports');
      return next;
    },
  };
}

const noSleep = async () => undefined;

describe('auditLiveLedger', () => {
  it('answers the first audit that holds: a transfer in flight during one scan is not a broken ledger', async () => {
    const { audit, calls } = scripted(report(['USD: difference 2.00']), report([]));
    const sleeps: number[] = [];
    const result = await auditLiveLedger({ attempts: 3, pauseMs: 60_000, segments: 4, audit, sleep: async (ms) => void sleeps.push(ms) });
    expect(result).toMatchObject({ ok: true, attempts: 2, problems: [] });
    expect(calls).toEqual([{ segments: 4 }, { segments: 4 }]);
    expect(sleeps).toEqual([60_000]);
  });

  it("reports the ledger broken, with the last attempt's problems, only when every attempt finds it broken", async () => {
    const { audit } = scripted(report(['a']), report(['b']), report(['USD: difference 5.00']), report([]));
    const result = await auditLiveLedger({ attempts: 3, pauseMs: 1, audit, sleep: noSleep });
    expect(result).toMatchObject({ ok: false, attempts: 3, problems: ['USD: difference 5.00'] });
  });

  it('starts no attempt that would not finish in the time left', async () => {
    const { audit, calls } = scripted(report(['a']), report([]));
    const result = await auditLiveLedger({ attempts: 3, pauseMs: 60_000, audit, sleep: noSleep, timeLeftMs: () => 30_000 });
    expect(result).toMatchObject({ ok: false, attempts: 1 });
    expect(calls).toHaveLength(1);
  });
});
