/**
 * The console's pages over the payer's money and settings (Add funds, Activity, Grants, Limits,
 * Developers): each a `ConsoleRoute` the framework mounts beside its own (sign-in, Overview,
 * Approvals, Security).
 */
import type { ConsoleRoute } from '../page';

export const PAGE_ROUTES: readonly ConsoleRoute[] = [];
