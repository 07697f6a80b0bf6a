import type { FlowLaneStats } from "./gate.ts";
import type { LiveLanes } from "./service.ts";

/** What the cluster's nodes say to each other (ClusterMembership's questions). */
export interface NodeQuestions {
  ask(topic: string, question: string): Promise<string[]>;
  answer(topic: string, fn: (question: string) => Promise<string>): void;
}

const TOPIC = "flow-lanes";

/**
 * The live counters of flow-control lanes across every node sharing the storage: this node's
 * workers and the others', asked through the storage (a key's deliveries run on the node that
 * owns its partition, so its counters are there). Registers this node's answer to the others.
 */
export function clusterLanes(local: LiveLanes, nodes: NodeQuestions): LiveLanes {
  nodes.answer(TOPIC, async (question) => JSON.stringify(await local(JSON.parse(question) as Parameters<LiveLanes>[0])));
  return async (filter) => {
    const [mine, others] = await Promise.all([local(filter), nodes.ask(TOPIC, JSON.stringify(filter))]);
    return mergeLanes([mine, ...others.map((answer) => JSON.parse(answer) as FlowLaneStats[])]);
  };
}

/**
 * One lane's counters from every node: waiting, in flight and started within the period add up;
 * the period began at the oldest start; the limits are those of the node delivering most of it.
 */
export function mergeLanes(answers: FlowLaneStats[][]): FlowLaneStats[] {
  const byKey = new Map<string, FlowLaneStats>();
  const weight = (s: FlowLaneStats) => s.active + s.waiting + s.rateCount;
  for (const stats of answers.flat()) {
    const known = byKey.get(stats.key);
    if (!known) {
      byKey.set(stats.key, { ...stats });
      continue;
    }
    const lead = weight(stats) > weight(known) ? stats : known;
    byKey.set(stats.key, {
      ...lead,
      waiting: known.waiting + stats.waiting,
      active: known.active + stats.active,
      rateCount: known.rateCount + stats.rateCount,
      periodStart: Math.min(known.periodStart, stats.periodStart),
    });
  }
  return [...byKey.values()];
}
