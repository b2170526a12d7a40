import { userMeOperation } from '../operations/payers';
import { lambdaHandler } from './lambda';

export const handler = lambdaHandler(userMeOperation);
