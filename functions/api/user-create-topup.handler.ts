import { userCreateTopupOperation } from '../operations/topups';
import { lambdaHandler } from './lambda';

export const handler = lambdaHandler(userCreateTopupOperation);
