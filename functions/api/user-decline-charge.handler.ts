import { userDeclineChargeOperation } from '../operations/payers';
import { lambdaHandler } from './lambda';

export const handler = lambdaHandler(userDeclineChargeOperation);
