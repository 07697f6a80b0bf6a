/**
 * How batches of jobs and outcomes cross between the main thread and a delivery worker: the
 * records as one JSON text and their bodies packed into one buffer, which is moved, not copied.
 * A structured clone of the same records (objects, header pairs, one transferred buffer each)
 * cost about three times as much, on both threads.
 */
import type { DeliveryOutcome } from "../model/outcome.ts";
import type { DeliveryJob } from "./worker-protocol.ts";

/** A batch on the wire: `text` holds the records with each body as [offset, length] into `bodies`. */
export interface Packed {
  text: string;
  bodies: ArrayBuffer;
}

type BodyRef = [number, number];

function pack<T extends { body?: Uint8Array }>(records: T[]): Packed {
  let size = 0;
  for (const r of records) size += r.body?.byteLength ?? 0;
  const bodies = new Uint8Array(size);
  const own = records.map((r) => r.body);
  // Each body stands in for itself as [offset, length] while the records are written out (a
  // replacer function doing the same made JSON.stringify four times slower).
  let offset = 0;
  const refs = records as Array<{ body?: Uint8Array | BodyRef }>;
  try {
    for (const r of refs) {
      const body = r.body as Uint8Array | undefined;
      if (!body) continue;
      bodies.set(body, offset);
      r.body = [offset, body.byteLength];
      offset += body.byteLength;
    }
    return { text: JSON.stringify(records), bodies: bodies.buffer };
  } finally {
    refs.forEach((r, i) => {
      if (own[i]) r.body = own[i];
    });
  }
}

function unpack<T>(packed: Packed): T[] {
  const records = JSON.parse(packed.text) as Array<{ body?: BodyRef | Uint8Array }>;
  for (const r of records) {
    if (Array.isArray(r.body)) r.body = new Uint8Array(packed.bodies, r.body[0], r.body[1]);
  }
  return records as T[];
}

export const packJobs = (jobs: DeliveryJob[]): Packed => pack(jobs);
export const unpackJobs = (packed: Packed): DeliveryJob[] => unpack<DeliveryJob>(packed);
export const packOutcomes = (outcomes: DeliveryOutcome[]): Packed => pack(outcomes);
export const unpackOutcomes = (packed: Packed): DeliveryOutcome[] => unpack<DeliveryOutcome>(packed);
