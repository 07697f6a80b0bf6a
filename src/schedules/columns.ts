import { Type } from "@sinclair/typebox";
import { FlowControlJson, HeaderPairs } from "../model/columns.ts";
import { jsonColumn } from "../store/json-column.ts";

/** Readers of a schedule row's JSON columns (checked: see store/json-column.ts). */
export const readScheduleHeaders = jsonColumn("schedules.headers", HeaderPairs);

export const readScheduleSettings = jsonColumn(
  "schedules.settings",
  Type.Object({
    method: Type.String(),
    headers: HeaderPairs,
    retries: Type.Number(),
    delayMs: Type.Number(),
    flow: Type.Optional(FlowControlJson),
  }),
);

export const readLastStates = jsonColumn("schedules.last_states", Type.Record(Type.String(), Type.String()));
