import { useEffect, useState } from "preact/hooks";
import { refreshAll } from "../live.ts";

interface Toast {
  id: number;
  tone: "good" | "bad";
  text: string;
}

let toasts: Toast[] = [];
let nextId = 1;
const listeners = new Set<() => void>();
const emit = () => listeners.forEach((fn) => fn());

export function notify(text: string, tone: Toast["tone"] = "good"): void {
  const toast = { id: nextId++, tone, text };
  toasts = [...toasts, toast].slice(-4);
  emit();
  setTimeout(() => {
    toasts = toasts.filter((t) => t !== toast);
    emit();
  }, tone === "bad" ? 8000 : 4000);
}

/**
 * Runs one action against the API: the answer (or the error) shows as a toast and every view
 * re-reads at once. Resolves to the answer, or undefined when it failed.
 */
export async function act<T>(label: string, run: () => Promise<T>, describe?: (answer: T) => string): Promise<T | undefined> {
  try {
    const answer = await run();
    notify(describe ? describe(answer) : label);
    refreshAll();
    return answer;
  } catch (error) {
    notify(`${label} failed: ${(error as Error).message}`, "bad");
    refreshAll();
    return undefined;
  }
}

export function Toasts() {
  const [, setTick] = useState(0);
  useEffect(() => {
    const update = () => setTick((n) => n + 1);
    listeners.add(update);
    return () => void listeners.delete(update);
  }, []);
  return (
    <div class="toasts" role="status" aria-live="polite">
      {toasts.map((t) => (
        <div key={t.id} class={`toast ${t.tone}`}>
          {t.text}
        </div>
      ))}
    </div>
  );
}
