import { jwksOperation } from '../operations/receipts';
import { lambdaHandler } from './lambda';

export const handler = lambdaHandler(jwksOperation);
