import { adminGetUserOperation } from '../operations/admin-users';
import { lambdaHandler } from './lambda';

export const handler = lambdaHandler(adminGetUserOperation);
