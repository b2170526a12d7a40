import { loadConfig } from '../config';
import { withRequestContext } from '../observability/lambda-handler';
import { expireDueCharges } from '../use-cases/expiry';

loadConfig();

/** Scheduled (EventBridge) sweep: PENDING charges past `expiresAt` become EXPIRED, holds go back. */
export const handler = withRequestContext(async () => expireDueCharges());
