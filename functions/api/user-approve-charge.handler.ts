import { userApproveChargeOperation } from '../operations/payers';
import { lambdaHandler } from './lambda';

export const handler = lambdaHandler(userApproveChargeOperation);
