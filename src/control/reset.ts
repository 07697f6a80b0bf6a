import type { ResetPart } from "../context/domain-module.ts";
import type { Transactor } from "../store/transactor.ts";

/**
 * `POST /__svc/reset`: every domain says how to forget one account, so the control plane never
 * needs to know which tables exist. All parts run in one transaction, in the order given: a reset
 * either happens completely or not at all.
 */
export class ResetRegistry {
  constructor(
    private readonly commit: Transactor,
    private readonly parts: readonly ResetPart[],
  ) {
    const names = new Set<string>();
    for (const { name } of parts) {
      if (names.has(name)) throw new Error(`reset part "${name}" is given twice`);
      names.add(name);
    }
  }

  names(): string[] {
    return this.parts.map((p) => p.name);
  }

  /** Runs every part for `accountId` in one group-commit transaction; returns the part names. */
  async resetAccount(accountId: string): Promise<string[]> {
    return this.commit.run(async (tx) => {
      for (const part of this.parts) await part.reset(tx, accountId);
      return this.names();
    });
  }
}
