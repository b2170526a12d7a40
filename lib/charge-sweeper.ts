/**
 * The charge sweeper: every minute, PENDING charges past `expiresAt` become EXPIRED and their holds
 * go back to the users (functions/use-cases/charges/expiry.ts). The design allows an expiry to lag by at
 * most 60 s; approve/decline already refuse an expired charge on their own, so the sweep only
 * returns money, it never decides an outcome.
 */
import { Duration } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import type { Construct } from 'constructs';
import { BACKGROUND_GRANTS } from '../functions/store/access';
import type { DataStore } from './data-store';
import { ScheduledFunction } from './scheduled-function';
import { reservedConcurrency, type StageConfig } from './stage-config';

export const SWEEPER_ENTRY = 'functions/sweeper/handler.ts';

/** Expiry lags by at most this (the design's 60 s). */
export const SWEEP_EVERY = Duration.minutes(1);
/** A sweep ends before the next one starts, so two never overlap. */
export const SWEEPER_TIMEOUT = Duration.seconds(50);

export class ChargeSweeper extends ScheduledFunction {
  constructor(scope: Construct, id: string, props: { config: StageConfig; data: DataStore }) {
    const { config, data } = props;
    super(scope, id, {
      entry: SWEEPER_ENTRY,
      description: 'Charge sweeper: expires PENDING charges past expiresAt and returns their holds',
      timeout: SWEEPER_TIMEOUT,
      config,
      environment: {
        TABLE_NAME: data.table.tableName,
        SWEEP_MAX_PER_RUN: String(config.sweepMaxPerRun),
      },
      // Holds go back on time even while the API uses the account's concurrency; one run at a time.
      reservedConcurrency: reservedConcurrency(config, config.sweeperReservedConcurrency),
      // Reads the due pending markers through GSI1; each expiry is one transaction (charge, marker,
      // the user's hold, the outbox). Nothing else: no queue, no secret.
      data,
      table: BACKGROUND_GRANTS.sweeper,
      // A failed sweep is not retried: the next one, a minute later, finds the same due charges.
      retryFailedRuns: false,
      scheduleDescription: 'Runs the charge sweeper (expires due PENDING charges)',
      schedule: events.Schedule.rate(SWEEP_EVERY),
      delivery: { retryAttempts: 0, maxEventAge: SWEEP_EVERY },
    });
  }
}
