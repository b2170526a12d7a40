/**
 * The console's pages over the payer's money and settings (Add funds, Statement, Grants, Limits,
 * Developers): each a `ConsoleRoute` the framework mounts beside its own (sign-in, Overview,
 * Approvals, Security).
 */
import type { ConsoleRoute } from '../page';
import { ACTIVITY_ROUTES } from './activity';
import { CONFIRM_ROUTES } from './confirm';
import { DEVELOPERS_ROUTES } from './developers';
import { FUNDS_ROUTES } from './funds';
import { GRANTS_ROUTES } from './grants';
import { LIMITS_ROUTES } from './limits';
import { RECEIPT_ROUTES } from './receipts';
import { STATEMENT_ROUTES } from './statement';

export const PAGE_ROUTES: readonly ConsoleRoute[] = [
  ...FUNDS_ROUTES,
  ...STATEMENT_ROUTES,
  ...RECEIPT_ROUTES,
  ...ACTIVITY_ROUTES,
  ...GRANTS_ROUTES,
  ...LIMITS_ROUTES,
  ...DEVELOPERS_ROUTES,
  ...CONFIRM_ROUTES,
];
