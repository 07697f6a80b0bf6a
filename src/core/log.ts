export type LogLevel = "debug" | "info" | "warn" | "error";
export type LogFormat = "pretty" | "json";

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** Whether a line of this level would be written; absent means assume yes. */
  enabled?(level: LogLevel): boolean;
}

export function createLogger(opts: {
  level: LogLevel;
  format: LogFormat;
  write?: (line: string) => void;
}): Logger {
  const write = opts.write ?? ((line: string) => process.stderr.write(line + "\n"));
  const min = RANK[opts.level];
  const emit = (level: LogLevel, msg: string, fields: Record<string, unknown> = {}) => {
    if (RANK[level] < min) return;
    if (opts.format === "json") {
      write(JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields }));
      return;
    }
    const extras = Object.entries(fields)
      .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)
      .join(" ");
    write(`${new Date().toISOString()} ${level.toUpperCase().padEnd(5)} ${msg}${extras ? " " + extras : ""}`);
  };
  return {
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
    enabled: (level) => RANK[level] >= min,
  };
}

/** Log lines show where a message goes, never the user:password a URL in them may carry. */
export function withoutCredentials(text: string): string {
  return text.replace(/(https?:\/\/)[^/@?#\s]*@/gi, "$1***@");
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {}, enabled: () => false };
