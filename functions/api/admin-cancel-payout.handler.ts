import { adminCancelPayoutOperation } from '../operations/admin-payouts';
import { lambdaHandler } from './lambda';

export const handler = lambdaHandler(adminCancelPayoutOperation);
