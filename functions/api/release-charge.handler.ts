import { releaseChargeOperation } from '../operations/lifecycle';
import { lambdaHandler } from './lambda';

export const handler = lambdaHandler(releaseChargeOperation);
