import { getReceiptOperation } from '../operations/receipts';
import { lambdaHandler } from './lambda';

export const handler = lambdaHandler(getReceiptOperation);
