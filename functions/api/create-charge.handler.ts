import { createChargeOperation } from '../operations/charges';
import { lambdaHandler } from './lambda';

export const handler = lambdaHandler(createChargeOperation);
