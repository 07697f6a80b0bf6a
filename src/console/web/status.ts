import { createContext } from "preact";
import { useContext } from "preact/hooks";
import { api } from "./api.ts";
import type { Polled } from "./live.ts";

/** `GET /__svc/status`: the account, dialect, clock and live message counts. */
export interface ServerStatus {
  version: string;
  userId: string;
  email: string;
  plan: string;
  dialect: "svc" | "upstash";
  headerPrefix: string;
  clock: { mode: "real" | "manual"; now: number };
  messages: { inFlight: number; due: number; delayed: number; waiting: number };
  dlq: number;
  /** A read-only token: the console hides what publishes, changes or deletes (the server refuses it anyway). */
  readOnly?: boolean;
}

export const readStatus = () => api<ServerStatus>("/__svc/status");

/** The status the shell polls, for every page: the header prefix, the server's clock. */
export const StatusContext = createContext<Polled<ServerStatus> | null>(null);
export const useStatus = (): Polled<ServerStatus> => useContext(StatusContext)!;

/** `Svc-Retries` or `Upstash-Retries`, as the server's dialect names it. */
export const configHeader = (status: ServerStatus | undefined, suffix: string) => `${status?.headerPrefix ?? "Svc"}-${suffix}`;
