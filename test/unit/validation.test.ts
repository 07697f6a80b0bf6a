import { Type } from "@sinclair/typebox";
import { expect, test } from "bun:test";
import { checkShape, describeProblem, fieldName, firstProblem } from "../../src/core/validation.ts";

const Index = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    region: Type.Union([Type.Literal("eu-west-1"), Type.Literal("us-central1")]),
    dimensions: Type.Optional(Type.Integer({ minimum: 1, maximum: 1536 })),
    ratio: Type.Optional(Type.Number({ minimum: 0 })),
    tags: Type.Optional(Type.Array(Type.String({ maxLength: 3 }), { minItems: 1 })),
    enabled: Type.Optional(Type.Boolean()),
    samples: Type.Optional(Type.Array(Type.Object({ at: Type.Integer({ minimum: 0 }) }))),
  },
  { additionalProperties: false },
);
const ok = { name: "a", region: "eu-west-1" as const };

test("field paths read like the JSON they point into", () => {
  expect(fieldName("", "/samples/0/at")).toBe("samples[0].at");
  expect(fieldName("accounts[2]", "/plan")).toBe("accounts[2].plan");
  expect(fieldName("batch[3]", "")).toBe("batch[3]");
});

test("each kind of problem reads as <field>: <what is wrong>", () => {
  const cases: Array<[unknown, string]> = [
    [{ region: "eu-west-1" }, "name: is required"],
    [{ ...ok, name: "" }, "name: must not be empty"],
    [{ ...ok, name: 5 }, "name: must be a string"],
    [{ ...ok, region: "mars" }, "region: must be one of eu-west-1, us-central1"],
    [{ ...ok, dimensions: 0 }, "dimensions: must be an integer from 1 to 1536"],
    [{ ...ok, dimensions: 2.5 }, "dimensions: must be an integer from 1 to 1536"],
    [{ ...ok, dimensions: "5" }, "dimensions: must be an integer from 1 to 1536"],
    [{ ...ok, ratio: -1 }, "ratio: must be a number of at least 0"],
    [{ ...ok, tags: [] }, "tags: must not be empty"],
    [{ ...ok, tags: ["long"] }, "tags[0]: must be at most 3 characters long"],
    [{ ...ok, tags: "a" }, "tags: must be a list"],
    [{ ...ok, enabled: "yes" }, "enabled: must be true or false"],
    [{ ...ok, samples: [{ at: 1 }, { at: -1 }] }, "samples[1].at: must be an integer of at least 0"],
    [{ ...ok, extra: 1 }, "extra: is not a known field"],
    [[1], "body: must be a JSON object"],
  ];
  for (const [value, text] of cases) expect(firstProblem(Index, value, Array.isArray(value) ? "body" : "")).toBe(text);
  expect(firstProblem(Index, ok)).toBeNull();
});

test("the coercion unions of query values read as the value they stand for, never as a list of twins", () => {
  // What Elysia makes of t.Integer and t.Numeric in a query: "5" or 5.
  const integerish = { anyOf: [{ type: "string", format: "integer" }, { type: "integer", minimum: 0 }], minimum: 0 };
  const numeric = { anyOf: [{ type: "string", format: "numeric" }, { type: "number", minimum: 1, maximum: 600000 }], minimum: 1, maximum: 600000 };
  const booleanish = { anyOf: [{ type: "boolean" }, { type: "string", format: "boolean" }] };
  expect(describeProblem({ type: 62, path: "/ms", schema: integerish, value: "soon", message: "Expected union value" })).toBe(
    "must be an integer of at least 0",
  );
  expect(describeProblem({ type: 62, path: "/timeout", schema: numeric, value: "abc", message: "Expected union value" })).toBe(
    "must be a number from 1 to 600000",
  );
  expect(describeProblem({ type: 62, path: "/flush", schema: booleanish, value: "maybe", message: "Expected union value" })).toBe(
    "must be true or false",
  );
});

test("a union of different kinds names each with its bounds", () => {
  const Step = Type.Object({ fromStep: Type.Union([Type.String({ minLength: 1 }), Type.Integer({ minimum: 1 })]) });
  for (const fromStep of [0, "", 1.5, true]) expect(firstProblem(Step, { fromStep })).toBe("fromStep: must be a non-empty string or an integer of at least 1");
  expect(firstProblem(Step, { fromStep: "charge" })).toBeNull();
});

test("checkShape hands the caller the problem to throw as its own kind of error", () => {
  expect(checkShape(Index, ok, "", () => {
    throw new Error("unreachable");
  })).toEqual(ok);
  expect(() =>
    checkShape(Index, { ...ok, name: "" }, "accounts[0]", (problem) => {
      throw new RangeError(problem);
    }),
  ).toThrow(new RangeError("accounts[0].name: must not be empty"));
});
