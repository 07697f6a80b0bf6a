import type { ComponentChildren } from "preact";
import { useErrorBoundary } from "preact/hooks";

/**
 * Keeps a failure inside what failed: a page or a chart that throws while it renders or in an
 * effect shows one short line here instead of taking the navigation and every other view down.
 */
export function Boundary({ what, children }: { what: string; children: ComponentChildren }) {
  const [error, retry] = useErrorBoundary((e: unknown) => console.error(`svcd console: the ${what} failed:`, e));
  if (!error) return <>{children}</>;
  const message = error instanceof Error ? error.message : String(error);
  return (
    <div class="error-box" role="alert" data-testid="failed-view">
      The {what} could not be shown: {message}{" "}
      <button type="button" class="small" onClick={retry}>
        Try again
      </button>
    </div>
  );
}
