import type { Config } from "./config";
/** The configured credentials (model API key, API tokens) a debug stage must never carry. */
export const configuredSecrets = (config: Pick<Config, "llm" | "tokens">): string[] =>
  [config.llm.apiKey ?? "", ...(config.tokens?.keys() ?? [])].filter(Boolean);
