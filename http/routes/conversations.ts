import { Hono } from "hono";
import { issueConversationCredential } from "../../storage/conversation-credentials";
import type { AuthEnv } from "../auth";
import { conversationNotFound, credentialHeaders } from "../conversation-access";
import type { Deps } from "../deps";

/**
 * POST /v1/conversations/{conversationId}/credential (admin, http/roles.ts): a new credential for
 * an existing conversation of any system — the migration path for conversations created before
 * credentials existed, or a patient's lost one. The previous credential stops working.
 */
export function conversationRoutes(deps: Deps): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  app.post("/v1/conversations/:conversationId/credential", async (c) => {
    const issued = await issueConversationCredential(deps.db.sql, c.get("tenantId"), c.req.param("conversationId"));
    if (!issued) throw conversationNotFound();
    return c.json(
      {
        conversationId: issued.conversationId,
        kind: issued.kind,
        conversationToken: issued.credential,
        replaced: issued.replaced,
      },
      201,
      credentialHeaders(issued.credential),
    );
  });
  return app;
}
