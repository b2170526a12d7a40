/**
 * A function on an EventBridge schedule, the shape of the charge sweeper, the top-up watcher, the
 * daily ledger audit and the payout reconciler: a ServiceFunction, its table and secret grants, and
 * the rule that runs it. The alarms every scheduled function has (errors, not running) are specs
 * built from it (`errorAlarm`, `notRunningAlarm`), which lib/monitoring.ts puts in its table.
 *
 * Children: the function under `functionId` (`Function` unless given) and the rule `Schedule`.
 * Constructs that were written by hand before extend it (their children keep their paths, hence
 * their logical ids: the log group is retained, a new id would orphan it); the reconciler, a part
 * of the payout pipeline, is one under the id `Default`, which CDK leaves out of logical ids.
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import type { TableGrant } from '../functions/store/access';
import type { AlarmSpec } from './alarms';
import type { DataStore } from './data-store';
import { grantReadSecrets, grantTable } from './grants';
import { ServiceFunction, type ServiceFunctionProps } from './service-function';

export interface ScheduledFunctionProps extends ServiceFunctionProps {
  /** Construct id of the function (`Function` by default). */
  functionId?: string;
  schedule: events.Schedule;
  /** The rule's description. */
  scheduleDescription: string;
  /**
   * How EventBridge retries an invocation it could not hand over, and for how long. A run that is
   * simply done by the next one: 0 retries, an age of one interval.
   */
  delivery: { retryAttempts: number; maxEventAge: Duration };
  /**
   * Whether Lambda retries a run that failed (its async retries). Off for a run the next one
   * covers (a sweep); left at Lambda's default otherwise.
   */
  retryFailedRuns?: false;
  /** The table and what it may do there (functions/store/access.ts); nothing when absent. */
  data?: DataStore;
  table?: TableGrant;
  /** Secrets it reads (GetSecretValue, plus kms:Decrypt through Secrets Manager for a customer key). */
  secrets?: readonly secretsmanager.ISecret[];
}

/** A scheduled function has not run when its schedule has fired three times with no invocation: 15 minutes at one a minute. */
const NOT_RUNNING_WINDOW = Duration.minutes(15);

export class ScheduledFunction extends Construct {
  readonly fn: ServiceFunction;
  readonly schedule: events.Rule;

  constructor(scope: Construct, id: string, props: ScheduledFunctionProps) {
    super(scope, id);
    const { functionId = 'Function', schedule, scheduleDescription, delivery, retryFailedRuns, data, table, secrets, ...fnProps } = props;

    this.fn = new ServiceFunction(this, functionId, fnProps);
    if (table) {
      if (!data) throw new Error(`${this.node.path}: a table grant needs the data store`);
      grantTable(this.fn.role, data.table, table);
    }
    if (secrets) grantReadSecrets(this.fn.role, secrets);
    if (retryFailedRuns === false) this.fn.fn.configureAsyncInvoke({ retryAttempts: 0 });

    this.schedule = new events.Rule(this, 'Schedule', {
      description: scheduleDescription,
      schedule,
      targets: [new targets.LambdaFunction(this.fn.fn, delivery)],
    });
  }

  /** Alarm: the function failed in 2 of the last 3 five-minute periods. */
  errorAlarm(id: string, description: string): AlarmSpec {
    return {
      id,
      description,
      metric: this.fn.fn.metricErrors({ period: Duration.minutes(5), statistic: 'Sum' }),
      threshold: 1,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
    };
  }

  /** Alarm: no invocation for 15 minutes (its schedule is disabled or broken). */
  notRunningAlarm(id: string, description: string): AlarmSpec {
    return {
      id,
      description,
      metric: this.fn.fn.metricInvocations({ period: NOT_RUNNING_WINDOW, statistic: 'Sum' }),
      threshold: 1,
      comparison: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
      // No invocations means no data points at all: that is exactly the failure.
      missingData: cloudwatch.TreatMissingData.BREACHING,
    };
  }
}
