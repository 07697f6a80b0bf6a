import type { ComponentChildren } from "preact";
import { navigate } from "../router.ts";

/**
 * A table row that opens `to`: focusable (`j`/`k` move between rows), Enter or a click opens it;
 * clicks on its own links, buttons and checkboxes keep their meaning.
 */
export function LinkRow({ to, children, selected }: { to: string; children: ComponentChildren; selected?: boolean }) {
  return (
    <tr
      data-row
      tabIndex={0}
      class={`link-row ${selected ? "selected" : ""}`}
      onClick={(e) => {
        if ((e.target as Element).closest("a, button, input, label")) return;
        navigate(to);
      }}
      onKeyDown={(e) => {
        if (e.key === "Enter" && e.target === e.currentTarget) navigate(to);
      }}
    >
      {children}
    </tr>
  );
}

/** Context tags of a message: URL Group, queue, schedule, flow-control key, labels. */
export function ContextTags({ e }: { e: { topicName?: string; endpointName?: string; queueName?: string; scheduleId?: string; flowControlKey?: string; label?: string; labels?: string[] } }) {
  const labels = e.labels ?? (e.label ? [e.label] : []);
  return (
    <span class="tags">
      {e.topicName && <span class="tag" title="URL Group">⑂ {e.topicName}{e.endpointName ? `/${e.endpointName}` : ""}</span>}
      {e.queueName && <span class="tag" title="queue">≡ {e.queueName}</span>}
      {e.scheduleId && <span class="tag" title="schedule">⏱ {e.scheduleId}</span>}
      {e.flowControlKey && <span class="tag" title="flow-control key">⇶ {e.flowControlKey}</span>}
      {labels.map((l) => (
        <span key={l} class="tag label" title="label">
          # {l}
        </span>
      ))}
    </span>
  );
}
