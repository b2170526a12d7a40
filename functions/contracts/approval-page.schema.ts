/** The approval page's form (functions/use-cases/charges/approval-page.ts): which button was pressed. */
import * as z from 'zod';

export const approvalDecisionSchema = z.strictObject({ action: z.enum(['approve', 'decline']) });
export type ApprovalDecision = z.infer<typeof approvalDecisionSchema>;

/** The form holds one short field; anything much longer is not from the page. */
export const APPROVAL_FORM_MAX_BYTES = 256;
