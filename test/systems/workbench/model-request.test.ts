import { describe, expect, it } from "vitest";
import {
  answerMessages,
  buildModelRequest,
  conversationWindow,
  passedIdentities,
} from "../../../systems/workbench/model-request";
import { offlineAnswer } from "../../../systems/workbench/offline-answer";
import { validateResponse } from "../../../systems/workbench/validate-response";
import { ANSWER_PROMPT } from "../../../systems/workbench/prompts";
import { createHash } from "node:crypto";

const req = buildModelRequest({
  request: "Перечисли композиции в папке «Продажи»",
  plan: {
    planVersion: 1,
    plannedBy: "deterministic",
    tasks: [{ id: "task-1", intent: "list_entities", sourceMode: "domain", mentions: [], dependsOn: [] }],
  },
  resolution: [{ taskId: "task-1", mention: "", status: "resolved", candidates: [], items: ["composition-a"] }],
  blocks: [
    {
      kind: "entity",
      taskId: "task-0",
      identity: "folder-sales",
      documentType: "Folder",
      displayName: "Продажи",
      folder: null,
      content: {},
      pinned: true,
      truncated: false,
      tokens: 10,
    },
    {
      kind: "list",
      taskId: "task-1",
      entityType: "Composition",
      folder: { identity: "folder-sales", displayName: "Продажи" },
      items: [
        { identity: "composition-a", displayName: "А", documentType: "Composition", folderIdentity: "folder-sales" },
      ],
      total: 1,
      tokens: 20,
    },
  ],
  conversation: [{ role: "user", text: "привет" }],
  workspace: { generation: "1", snapshotSha256: "abc" },
});

describe("ModelRequest (stage 11)", () => {
  it("has the seed's shape and no internal budget fields", () => {
    expect(Object.keys(req)).toEqual(["request", "plan", "context", "conversation", "workspace"]);
    expect(JSON.stringify(req)).not.toContain("tokens");
    expect(JSON.stringify(req)).not.toContain("pinned");
  });
  it("knows which identities the model was shown", () => {
    expect([...passedIdentities(req)].sort()).toEqual(["composition-a", "folder-sales"]);
  });
  it("uses a versioned prompt whose sha256 is the hash of its text", () => {
    const { messages, manifest } = answerMessages(req);
    expect(messages[0]!.content).toBe(ANSWER_PROMPT.text);
    expect(manifest[0]).toEqual({
      id: "workbench.answer",
      version: "1",
      sha256: createHash("sha256").update(ANSWER_PROMPT.text).digest("hex"),
    });
  });
  it("the conversation window is bounded, newest kept, oldest first", () => {
    const h = Array.from({ length: 20 }, (_, i) => ({
      role: (i % 2 ? "assistant" : "user") as "user" | "assistant",
      text: `m${i}`,
    }));
    expect(conversationWindow(h, 4).map((m) => m.text)).toEqual(["m16", "m17", "m18", "m19"]);
  });
  it("the offline stand-in answers from the context and passes validation", () => {
    const a = offlineAnswer(req);
    expect(a).toContain("[[composition-a]]");
    expect(validateResponse(a, { exists: () => true, passed: passedIdentities(req) }).ok).toBe(true);
  });
});
