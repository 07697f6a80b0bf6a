import type { Logger } from "./log.ts";

/**
 * The one lifecycle shape of everything that works in the background between the server's start
 * and stop: the delivery workers, the dispatcher, the outcome recorder, the scheduler, the usage
 * metrics flusher, retention and the WAL checkpointer. Nothing starts in a constructor.
 */
export interface BackgroundService {
  /** Names the service in log lines. */
  readonly name: string;
  start(): void | Promise<void>;
  /**
   * Stops taking new work and finishes or hands back what is under way. `deadline` (wall-clock
   * ms, as Date.now()) bounds how long work in progress may still take.
   */
  stop(deadline: number): void | Promise<void>;
}

/**
 * Services started in the order given and stopped in reverse, so each one starts after what it
 * uses and stops before it. A service that fails to start stops the ones already started.
 */
export class ServiceGroup {
  private started: BackgroundService[] = [];

  constructor(
    private readonly services: readonly BackgroundService[],
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    for (const service of this.services) {
      try {
        await service.start();
      } catch (error) {
        await this.stop(Date.now());
        throw error;
      }
      this.started.push(service);
    }
  }

  async stop(deadline: number): Promise<void> {
    const started = this.started;
    this.started = [];
    for (const service of started.reverse()) {
      try {
        await service.stop(deadline);
      } catch (error) {
        // One service failing to stop must not keep the others (and the database) open.
        this.log.error(`stopping the ${service.name} failed`, { error: String((error as Error)?.message ?? error) });
      }
    }
  }
}
