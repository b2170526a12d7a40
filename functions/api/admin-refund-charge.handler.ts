import { adminRefundChargeOperation } from '../operations/admin-refund';
import { lambdaHandler } from './lambda';

export const handler = lambdaHandler(adminRefundChargeOperation);
