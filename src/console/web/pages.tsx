import type { FunctionComponent } from "preact";
import type { Route } from "./router.ts";
import { DlqPage } from "./pages/dlq.tsx";
import { FlowControlPage } from "./pages/flow-control.tsx";
import { KeysPage } from "./pages/keys.tsx";
import { MessagesPage } from "./pages/messages.tsx";
import { NotFoundPage } from "./pages/not-found.tsx";
import { OverviewPage } from "./pages/overview.tsx";
import { PublishPage } from "./pages/publish.tsx";
import { QueuesPage } from "./pages/queues.tsx";
import { SchedulesPage } from "./pages/schedules.tsx";
import { TestDoublePage } from "./pages/test-double.tsx";
import { UrlGroupsPage } from "./pages/url-groups.tsx";
import { WorkflowsPage } from "./pages/workflows.tsx";

export interface PageDef {
  /** First path segment below /console (`/` is the overview). */
  path: string;
  title: string;
  /** The letter after `g` that opens it. */
  key: string;
  nav: boolean;
  /** Only acts (publishes, moves the clock): hidden when the token is read-only. */
  writes?: boolean;
  component: FunctionComponent<{ route: Route }>;
}

export const PAGES: PageDef[] = [
  { path: "/", title: "Overview", key: "o", nav: true, component: OverviewPage },
  { path: "/messages", title: "Messages", key: "m", nav: true, component: MessagesPage },
  { path: "/dlq", title: "DLQ", key: "d", nav: true, component: DlqPage },
  { path: "/workflows", title: "Workflows", key: "w", nav: true, component: WorkflowsPage },
  { path: "/schedules", title: "Schedules", key: "s", nav: true, component: SchedulesPage },
  { path: "/url-groups", title: "URL Groups", key: "u", nav: true, component: UrlGroupsPage },
  { path: "/queues", title: "Queues", key: "q", nav: true, component: QueuesPage },
  { path: "/flow-control", title: "Flow control", key: "f", nav: true, component: FlowControlPage },
  { path: "/publish", title: "Publish", key: "p", nav: true, writes: true, component: PublishPage },
  { path: "/test-double", title: "Test double", key: "t", nav: true, writes: true, component: TestDoublePage },
  { path: "/keys", title: "Signing keys", key: "k", nav: true, component: KeysPage },
];

const NOT_FOUND: PageDef = { path: "", title: "Not found", key: "", nav: false, component: NotFoundPage };

export function findPage(path: string): PageDef {
  if (path === "/") return PAGES[0]!;
  return PAGES.find((p) => p.path !== "/" && (path === p.path || path.startsWith(p.path + "/"))) ?? NOT_FOUND;
}
