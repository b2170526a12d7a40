import { userGetPolicyOperation } from '../operations/payers';
import { lambdaHandler } from './lambda';

export const handler = lambdaHandler(userGetPolicyOperation);
