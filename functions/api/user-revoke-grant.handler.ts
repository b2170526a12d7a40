import { userRevokeGrantOperation } from '../operations/grants';
import { lambdaHandler } from './lambda';

export const handler = lambdaHandler(userRevokeGrantOperation);
