import type { StepEntry } from "../../workflows/model.ts";
import { toStep, toWaiter } from "../../workflows/run-rows.ts";
import type { ErrorRow, RunRow, StepRow, StoredWaiter, WaiterRow } from "../../workflows/run-rows.ts";
import { bytes, num, numOrNull, rowOf, type RowCodec, str, strOrNull } from "./values.ts";

/** The workflow tables' rows as PostgreSQL hands them back (BIGINT as text, BYTEA as a Buffer), as shared row types. */

type Raw = Record<string, unknown>;

const RUN_COLUMNS: RowCodec<RunRow> = {
  seq: num,
  account_id: str,
  run_id: str,
  url: str,
  created_at: num,
  state: str,
  completed_at: numOrNull,
  label: strOrNull,
  caller_ip: strOrNull,
  flow_key: strOrNull,
  dlq_id: strOrNull,
  result: strOrNull,
  data: str,
  unsettled: num,
};
const STEP_COLUMNS: RowCodec<StepRow> = {
  account_id: str,
  run_id: str,
  position: num,
  message_id: str,
  call_type: str,
  url: str,
  method: str,
  body: bytes,
  created_at: num,
  headers: str,
  retries: num,
  retry_delay: strOrNull,
  state: str,
  next_delivery_at: numOrNull,
  details: strOrNull,
};
const WAITER_COLUMNS: RowCodec<WaiterRow> = {
  id: num,
  account_id: str,
  run_id: str,
  event_id: str,
  created_at: num,
  deadline: num,
  data: str,
};
const ERROR_COLUMNS: RowCodec<ErrorRow> = {
  message_id: str,
  time: num,
  status: num,
  error: str,
  body: str,
  headers: str,
};

export const runRowOfPg = (r: Raw): RunRow => rowOf(r, RUN_COLUMNS);
export const stepOfPg = (r: Raw): StepEntry => toStep(rowOf(r, STEP_COLUMNS));
export const waiterOfPg = (r: Raw): StoredWaiter => toWaiter(rowOf(r, WAITER_COLUMNS));
export const errorRowOfPg = (r: Raw): ErrorRow => rowOf(r, ERROR_COLUMNS);
