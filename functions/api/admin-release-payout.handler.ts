import { adminReleasePayoutOperation } from '../operations/admin-payouts';
import { lambdaHandler } from './lambda';

export const handler = lambdaHandler(adminReleasePayoutOperation);
