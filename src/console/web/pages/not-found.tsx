import { href } from "../router.ts";
import { PageHead } from "../ui/bits.tsx";

export function NotFoundPage() {
  return (
    <>
      <PageHead title="Not found" />
      <p>
        This console page does not exist. <a href={href("/")}>Go to the overview</a>.
      </p>
    </>
  );
}
