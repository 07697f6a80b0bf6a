import type { ServerConfig } from "../config/config.ts";
import type { Clock } from "../core/clock.ts";
import type { Logger } from "../core/log.ts";
import type { ServiceGroup } from "../core/service.ts";
import { listen } from "../http/listen.ts";
import type { RoutePlugin } from "../http/plugin.ts";
import type { StorageEngine } from "../engines/engine.ts";
import { ShutdownSummary } from "../telemetry/shutdown-summary.ts";
import type { LiveEventStreams } from "../telemetry/live-events.ts";
import type { MessageEngine } from "./engine.ts";

export interface RunningServer {
  url: string;
  managementUrl: string;
  port: number;
  managementPort: number;
}

/**
 * Where the server is in its life, as the health check and the API description read it: ready
 * once both ports listen, no longer once the stop began; a stop runs once.
 */
export class ServerState {
  private serving = false;
  private stopped = false;
  private separateManagementUrl: string | null = null;

  get ready(): boolean {
    return this.serving;
  }

  /** Base URL of the management API when it listens on its own port, else null. */
  get managementUrl(): string | null {
    return this.separateManagementUrl;
  }

  listening(separateManagementUrl: string | null): void {
    this.serving = true;
    this.separateManagementUrl = separateManagementUrl;
  }

  /** Marks the stop begun; false when it had begun already. */
  stopping(): boolean {
    if (this.stopped) return false;
    this.stopped = true;
    this.serving = false;
    return true;
  }
}

export interface RuntimeParts {
  config: ServerConfig;
  log: Logger;
  clock: Clock;
  storage: StorageEngine;
  engine: MessageEngine;
  state: ServerState;
  services: ServiceGroup;
  mainApp: RoutePlugin;
  managementApp: RoutePlugin | null;
  liveEvents: LiveEventStreams;
}

/** Starts the background services, then both ports; nothing outlives a failed start. */
export async function startServer(parts: RuntimeParts): Promise<RunningServer> {
  const { config, services, mainApp, managementApp, state } = parts;
  await services.start();
  try {
    listen(mainApp, { port: config.port, host: config.host, flag: "--port" });
    if (managementApp) listen(managementApp, { port: config.managementPort!, host: config.host, flag: "--management-port" });
  } catch (error) {
    // The port that did bind is freed, the background services end.
    if (mainApp.server) await mainApp.stop();
    await services.stop(Date.now());
    throw error;
  }
  const port = mainApp.server!.port!;
  const managementPort = managementApp ? managementApp.server!.port! : port;
  const base = config.publicUrl ?? `http://${config.host}:${port}`;
  const managementUrl = managementApp ? `http://${config.host}:${managementPort}` : base;
  state.listening(managementApp ? managementUrl : null);
  return { url: base, managementUrl, port, managementPort };
}

/** Stops accepting, lets in-flight deliveries finish up to the deadline, closes the database. */
export async function stopServer(parts: RuntimeParts, deadlineMs: number): Promise<void> {
  const { engine, storage, log, state } = parts;
  if (!state.stopping()) return;
  const summary = new ShutdownSummary(engine.events, engine.inFlight.size);
  // An open event stream never ends by itself: the listeners would wait for it.
  parts.liveEvents.closeAll();
  await Promise.all([parts.mainApp.stop(), parts.managementApp?.stop()]);
  await parts.services.stop(Date.now() + deadlineMs);
  await storage.commit.flush();
  log.info("stopped", summary.finish(await storedCensus(parts)));
  await storage.close();
}

/** The stored messages after the stop; null when storage cannot be read. */
async function storedCensus({ storage, clock }: RuntimeParts) {
  try {
    return await storage.stores.messages.census(clock.now());
  } catch {
    return null;
  }
}
