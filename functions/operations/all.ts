/**
 * Every operation, for what reads them all: the tests that hold each to its registry entry (the
 * enforced schemas are the documented ones, the needs are its entry's) and the docs. A handler never
 * imports this list: its bundle carries its own operation only.
 */
import * as adminAgents from './admin-agents';
import * as adminPayouts from './admin-payouts';
import * as adminRefund from './admin-refund';
import * as adminUsers from './admin-users';
import * as agents from './agents';
import * as charges from './charges';
import * as grantRequests from './grant-requests';
import * as grants from './grants';
import * as lifecycle from './lifecycle';
import type { Operation } from './operation';
import * as payers from './payers';
import * as receipts from './receipts';
import * as service from './service';
import * as statement from './statement';
import * as tabs from './tabs';
import * as topups from './topups';
import * as webhooks from './webhooks';
import * as withdrawalList from './withdrawal-list';
import * as withdrawals from './withdrawals';
import * as x402Facilitator from './x402-facilitator';
import * as x402Payments from './x402-payments';
import * as x402PurchaseList from './x402-purchase-list';
import * as x402Purchases from './x402-purchases';
import * as x402Refunds from './x402-refunds';

// biome-ignore lint/suspicious/noExplicitAny: operations of any credentials, key rule, input and outcome.
type AnyOperation = Operation<any, any, any, any, any>;

const isOperation = (value: unknown): value is AnyOperation =>
  typeof value === 'object' && value !== null && 'route' in value && 'run' in value && 'render' in value;

/** Each operation by the name it is exported under (`createChargeOperation`). */
export const OPERATIONS: ReadonlyMap<string, AnyOperation> = new Map(
  [
    charges,
    lifecycle,
    withdrawals,
    withdrawalList,
    agents,
    grantRequests,
    adminUsers,
    adminAgents,
    adminPayouts,
    adminRefund,
    payers,
    grants,
    topups,
    webhooks,
    service,
    tabs,
    statement,
    x402Purchases,
    x402PurchaseList,
    x402Facilitator,
    x402Payments,
    x402Refunds,
    receipts,
  ].flatMap((module) => Object.entries(module).filter((entry): entry is [string, AnyOperation] => isOperation(entry[1]))),
);
