/**
 * The daily ledger audit on AWS: the same functions/audit code `npm run audit` runs
 * (functions/ledger-audit/handler.ts), once a day at `ledgerAuditHourUtc`, on the live table. It
 * emits LedgerAuditProblems; lib/monitoring.ts alarms when that is not 0 and when a day passes
 * without it (an audit that died). It reads the whole table: a Scan of the table itself (no index),
 * which no other function is granted.
 */
import { Duration } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import type { DataStore } from './data-store';
import { ScheduledFunction } from './scheduled-function';
import { reservedConcurrency, type StageConfig } from './stage-config';

export const LEDGER_AUDIT_ENTRY = 'functions/ledger-audit/handler.ts';
/** Lambda's longest: up to three whole-table scans a minute apart (functions/audit/live-audit.ts). */
export const LEDGER_AUDIT_TIMEOUT = Duration.minutes(15);

export class LedgerAudit extends ScheduledFunction {
  constructor(scope: Construct, id: string, props: { config: StageConfig; data: DataStore }) {
    const { config, data } = props;
    super(scope, id, {
      entry: LEDGER_AUDIT_ENTRY,
      description: 'Ledger audit, daily: checks the ledger invariant over the whole table and emits LedgerAuditProblems',
      // More memory is more CPU and network for parsing every item of the table.
      memorySize: 1024,
      timeout: LEDGER_AUDIT_TIMEOUT,
      config,
      environment: { TABLE_NAME: data.table.tableName },
      reservedConcurrency: reservedConcurrency(config, 1),
      scheduleDescription: 'Runs the ledger audit once a day',
      schedule: events.Schedule.cron({ minute: '17', hour: String(config.ledgerAuditHourUtc) }),
      // EventBridge retries an invocation it could not hand over; the day's run is still worth having late.
      delivery: { retryAttempts: 3, maxEventAge: Duration.hours(6) },
    });
    // The audit is made of Scans alone (store/audit/audit.repository.ts, topup-audit.repository.ts): the
    // table itself, no index, no other read and no write. LeadingKeys cannot narrow a Scan, so
    // this is the one table grant not written as key families.
    this.fn.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['dynamodb:Scan'], resources: [data.table.tableArn] }));
  }
}
