import { captureChargeOperation } from '../operations/lifecycle';
import { lambdaHandler } from './lambda';

export const handler = lambdaHandler(captureChargeOperation);
