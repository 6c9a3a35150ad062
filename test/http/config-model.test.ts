import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { loadConfig as load } from "../../http/config";
import { modelRoles } from "../../driver/system";
import { dialogueSystems } from "../../systems";

const loadConfig = (env: Record<string, string | undefined>) => load(env, modelRoles(dialogueSystems));

/** Issue 17 item 5: a base URL without a model name is a start-up error, not `gpt-4o-mini` sent to vLLM. */

const ROLES = ["ROUTER", "BRANCH", "PLANNER", "RERANKER", "CLASSIFIER", "ANSWER"];

describe("LLM_MODEL with OPENAI_BASE_URL", () => {
  it("is required when a base URL is set, unless every role names its model", () => {
    expect(() => loadConfig({ OPENAI_BASE_URL: "http://127.0.0.1:11434/v1" })).toThrow(
      /LLM_MODEL is not.*LLM_MODEL_ROUTER/,
    );
    expect(() => loadConfig({ OPENAI_BASE_URL: "http://x/v1", LLM_MODEL_ROUTER: "a" })).toThrow(/LLM_MODEL_BRANCH/);
    expect(loadConfig({ OPENAI_BASE_URL: "http://x/v1", LLM_MODEL: "llama3.1:8b" }).llm.model).toBe("llama3.1:8b");
    const all = Object.fromEntries(ROLES.map((r) => [`LLM_MODEL_${r}`, `m-${r}`]));
    expect(loadConfig({ OPENAI_BASE_URL: "http://x/v1", ...all }).llm.roleModels.router).toBe("m-ROUTER");
    // No endpoint (offline provider) or the OpenAI API itself (key only): no model needed.
    expect(() => loadConfig({})).not.toThrow();
    expect(() => loadConfig({ OPENAI_API_KEY: "sk-x" })).not.toThrow();
  });

  it("the server process stops at start with a clear message and exit code 1", () => {
    const env = {
      ...process.env,
      OPENAI_BASE_URL: "http://127.0.0.1:9/v1",
      LLM_MODEL: "",
      DATA_DIR: "memory://",
      PORT: "0",
    } as Record<string, string>;
    for (const r of ROLES) delete env[`LLM_MODEL_${r}`];
    const r = spawnSync(process.execPath, ["--import", "tsx", "main.ts"], {
      env,
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("could not start: Invalid configuration: OPENAI_BASE_URL is set");
    expect(r.stderr).toContain("Set LLM_MODEL");
  });
});
