import { adminCreditUserOperation } from '../operations/admin-users';
import { lambdaHandler } from './lambda';

export const handler = lambdaHandler(adminCreditUserOperation);
