import { healthOperation } from '../operations/service';
import { lambdaHandler } from './lambda';

export const handler = lambdaHandler(healthOperation);
