import { Type, type Static } from "@sinclair/typebox";

/** Faults of a delivery attempt (the worker thread carries them out). */
export const DELIVERY_KINDS = ["duplicate", "delay", "reorder", "timeout-after-answer"] as const;
/** Faults of an answer of the messaging API. */
export const API_KINDS = ["rate-limit", "quota", "error", "slow"] as const;
export type DeliveryFaultKind = (typeof DELIVERY_KINDS)[number];
export type ApiFaultKind = (typeof API_KINDS)[number];
export type FaultKind = DeliveryFaultKind | ApiFaultKind;

const Kind = Type.Union([...DELIVERY_KINDS, ...API_KINDS].map((k) => Type.Literal(k)), {
  description: `delivery: ${DELIVERY_KINDS.join(", ")}; API: ${API_KINDS.join(", ")}`,
});

export const FaultMatchJson = Type.Object(
  {
    url: Type.Optional(Type.String({ minLength: 1, description: "delivery: the destination URL starts with this" })),
    label: Type.Optional(Type.String({ minLength: 1, description: "delivery: the message carries this label" })),
    flowControlKey: Type.Optional(Type.String({ minLength: 1, description: "delivery: the message's flow-control key" })),
    queue: Type.Optional(Type.String({ minLength: 1, description: "delivery: the message's queue" })),
    route: Type.Optional(Type.String({ pattern: "^/", description: "API: the request path starts with this (e.g. /v2/publish)" })),
    method: Type.Optional(Type.String({ minLength: 1, description: "API: the request method (any when absent)" })),
  },
  { additionalProperties: false },
);

export const FaultRuleInputJson = Type.Object(
  {
    kind: Kind,
    match: Type.Optional(FaultMatchJson),
    probability: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 1, description: "fire on a match with this chance" })),
    seed: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 4294967295, description: "seed of the rule's random draws (default: chosen, and listed)" }),
    ),
    every: Type.Optional(Type.Integer({ minimum: 1, description: "fire on every Nth match" })),
    times: Type.Optional(Type.Integer({ minimum: 1, description: "fire on the next N matches, then stop" })),
    delayMs: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 86_400_000, description: "delay, reorder and slow: ms on the server's clock" }),
    ),
    status: Type.Optional(Type.Union([Type.Literal(500), Type.Literal(503)], { description: "error: the status (default 500)" })),
    scope: Type.Optional(
      Type.Union([Type.Literal("burst"), Type.Literal("daily")], { description: "rate-limit: which limit (default burst)" }),
    ),
    limit: Type.Optional(Type.Integer({ minimum: 1, description: "rate-limit: the limit the headers state" })),
    message: Type.Optional(Type.String({ minLength: 1, description: "quota: the error text" })),
  },
  { additionalProperties: false },
);
export type FaultRuleInput = Static<typeof FaultRuleInputJson>;

export const FaultRuleJson = Type.Composite([
  FaultRuleInputJson,
  Type.Object({
    id: Type.String(),
    createdAt: Type.Integer({ description: "Unix ms" }),
    seed: Type.Integer(),
    matched: Type.Integer({ description: "matches seen so far" }),
    fired: Type.Integer({ description: "faults injected so far" }),
  }),
]);

export interface FaultRule extends FaultRuleInput {
  id: string;
  createdAt: number;
  seed: number;
  matched: number;
  fired: number;
}

/** What a delivery or a request is matched on. */
export interface DeliveryFacts {
  url: string;
  labels?: string[];
  flowControlKey?: string;
  queue?: string;
}
export interface ApiFacts {
  path: string;
  method: string;
}

export const isDeliveryKind = (kind: FaultKind): kind is DeliveryFaultKind => (DELIVERY_KINDS as readonly string[]).includes(kind);

/** Why a rule cannot work as given (400), or null. */
export function ruleProblem(input: FaultRuleInput): string | null {
  const firing = [input.probability, input.every, input.times].filter((v) => v !== undefined).length;
  if (firing > 1) return 'give at most one of "probability", "every" and "times"';
  if (input.seed !== undefined && input.probability === undefined) return '"seed" needs "probability"';
  const m = input.match ?? {};
  const delivery = isDeliveryKind(input.kind);
  if (delivery && (m.route !== undefined || m.method !== undefined))
    return `a ${input.kind} fault matches deliveries: "route" and "method" match API requests`;
  if (!delivery && (m.url ?? m.label ?? m.flowControlKey ?? m.queue) !== undefined)
    return `a ${input.kind} fault matches API requests: use "route" and "method"`;
  const only: Array<[keyof FaultRuleInput, FaultKind[]]> = [
    ["delayMs", ["delay", "reorder", "slow"]],
    ["status", ["error"]],
    ["scope", ["rate-limit"]],
    ["limit", ["rate-limit"]],
    ["message", ["quota"]],
  ];
  for (const [field, kinds] of only)
    if (input[field] !== undefined && !kinds.includes(input.kind)) return `"${field}" applies to ${kinds.join(", ")} faults only`;
  if ((input.kind === "delay" || input.kind === "slow") && input.delayMs === undefined) return `a ${input.kind} fault needs "delayMs"`;
  return null;
}
