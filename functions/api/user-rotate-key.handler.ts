import { userRotateKeyOperation } from '../operations/payers';
import { lambdaHandler } from './lambda';

export const handler = lambdaHandler(userRotateKeyOperation);
