import { agentWebhooksDeleteOperation } from '../operations/webhooks';
import { lambdaHandler } from './lambda';

export const handler = lambdaHandler(agentWebhooksDeleteOperation);
