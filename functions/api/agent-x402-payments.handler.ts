import { x402PaymentsOperation } from '../operations/x402-payments';
import { lambdaHandler } from './lambda';

export const handler = lambdaHandler(x402PaymentsOperation);
