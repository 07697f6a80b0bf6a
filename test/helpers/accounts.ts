import type { AccountConfig } from "../../src/config/config-file.ts";

/** A config-file account entry with predictable credentials derived from `name`. */
export function account(name: string, extra: Partial<AccountConfig> = {}): AccountConfig {
  return {
    email: `${name}@svcd.test`,
    apiKey: `${name}_api_key`,
    userId: `${name}-user`,
    token: `${name}_token`,
    ...extra,
  };
}

export const jsonBody = (method: string, value: unknown): RequestInit => ({
  method,
  body: JSON.stringify(value),
  headers: { "content-type": "application/json" },
});
