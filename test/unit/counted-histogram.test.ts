import { expect, test } from "bun:test";
import { Histogram, Registry } from "prom-client";
import { CountedHistogram } from "../../src/telemetry/counted-histogram.ts";

/** The delivery histograms count on their own; a scrape must read exactly what prom-client's would. */
const BUCKETS = [0.005, 0.1, 1, 60];
const observations: Array<[string, number]> = [
  ["2xx", 0.003], ["5xx", 0.1], ["2xx", 0.5], ["no_answer", 120], ["2xx", 0.1], ["5xx", 0], ["2xx", 61.5],
];

test("with one label: the same exposition text and JSON as prom-client's Histogram", async () => {
  const theirs = new Registry();
  const ours = new Registry();
  const reference = new Histogram({ name: "h_seconds", help: "help \\ text", labelNames: ["result"], buckets: BUCKETS, registers: [theirs] });
  const counted = new CountedHistogram("h_seconds", "help \\ text", BUCKETS, "result");
  ours.registerMetric(counted);
  for (const [result, v] of observations) {
    reference.observe({ result }, v);
    counted.observe(result, v);
  }
  const text = await ours.metrics();
  expect(text).toBe(await theirs.metrics());
  expect(text).toContain('h_seconds_bucket{le="0.1",result="2xx"} 2');
  expect(text).toContain('h_seconds_count{result="no_answer"} 1');
  expect(await ours.getMetricsAsJSON()).toEqual(await theirs.getMetricsAsJSON());
});

test("without labels, and a value that is no number fails as prom-client's does", async () => {
  const theirs = new Registry();
  const ours = new Registry();
  const reference = new Histogram({ name: "l_seconds", help: "latency", buckets: BUCKETS, registers: [theirs] });
  const counted = new CountedHistogram("l_seconds", "latency", BUCKETS, null);
  ours.registerMetric(counted);
  expect(await ours.metrics()).toBe(await theirs.metrics());
  for (const [, v] of observations) {
    reference.observe(v);
    counted.observe("", v);
  }
  expect(await ours.metrics()).toBe(await theirs.metrics());
  expect(() => counted.observe("", Number.NaN)).toThrow(TypeError);
  expect(() => reference.observe(Number.NaN)).toThrow(TypeError);
  expect(await ours.metrics()).toBe(await theirs.metrics());
});

test("with several labels, keyed by the caller: the same exposition text and JSON as prom-client's Histogram", async () => {
  const theirs = new Registry();
  const ours = new Registry();
  const reference = new Histogram({ name: "r_seconds", help: "requests", labelNames: ["method", "route"], buckets: BUCKETS, registers: [theirs] });
  const counted = new CountedHistogram("r_seconds", "requests", BUCKETS, ["method", "route"]);
  ours.registerMetric(counted);
  // No series before the first observation, as a labelled prom-client histogram.
  expect(await ours.metrics()).toBe(await theirs.metrics());
  const requests: Array<[string, string, number]> = [
    ["POST", "/v2/publish/*", 0.002], ["GET", "/v2/logs", 0.03], ["POST", "/v2/publish/*", 0.0004], ["GET", "/v2/logs", 2],
  ];
  for (const [method, route, v] of requests) {
    reference.observe({ method, route }, v);
    counted.observeSeries(`${method} ${route}`, v, () => ({ method, route }));
  }
  const text = await ours.metrics();
  expect(text).toBe(await theirs.metrics());
  expect(text).toContain('r_seconds_count{method="POST",route="/v2/publish/*"} 2');
  expect(await ours.getMetricsAsJSON()).toEqual(await theirs.getMetricsAsJSON());
});
