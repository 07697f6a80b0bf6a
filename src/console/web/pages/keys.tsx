import { useState } from "preact/hooks";
import { api } from "../api.ts";
import { usePoll } from "../live.ts";
import { Card, ErrorBox, Loading, PageHead } from "../ui/bits.tsx";
import { act } from "../ui/toast.tsx";

interface Keys {
  current: string;
  next: string;
}

function Secret({ label, value }: { label: string; value: string }) {
  const [shown, setShown] = useState(false);
  return (
    <div class="secret">
      <span class="secret-label">{label}</span>
      <code class="mono" data-testid={`key-${label.toLowerCase()}`}>
        {shown ? value : `${value.slice(0, 4)}${"•".repeat(Math.max(4, value.length - 4))}`}
      </code>
      <button type="button" class="small" aria-pressed={shown} onClick={() => setShown(!shown)}>
        {shown ? "Hide" : "Show"}
      </button>
      <button type="button" class="small" onClick={() => navigator.clipboard?.writeText(value)}>
        Copy
      </button>
    </div>
  );
}

/** The signing keys receivers verify deliveries with; rotating makes the next key current. */
export function KeysPage() {
  const keys = usePoll(() => api<Keys>("/v2/keys"), "keys", 10_000);
  return (
    <>
      <PageHead title="Signing keys" sub="Every delivery is signed with the current key; receivers accept the current or the next one." />
      <Card
        actions={
          <button data-write
            type="button"
            class="danger"
            onClick={() => {
              if (confirm("Rotate the signing keys? The next key becomes current and a new next key is made; receivers that know only the old current key stop verifying."))
                act("Rotate", () => api<Keys>("/v2/keys/rotate", { method: "POST" }), () => "Keys rotated");
            }}
          >
            Rotate keys
          </button>
        }
      >
        {keys.error && <ErrorBox error={keys.error} />}
        {!keys.data && !keys.error && <Loading />}
        {keys.data && (
          <>
            <Secret label="Current" value={keys.data.current} />
            <Secret label="Next" value={keys.data.next} />
          </>
        )}
      </Card>
    </>
  );
}
