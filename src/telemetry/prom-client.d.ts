import "prom-client";

declare module "prom-client" {
  interface Registry {
    /**
     * prom-client registers any object with a name, a type and the `get` (and `getForPromString`)
     * of its metrics (lib/registry.js): svcd's own histograms (CountedHistogram) are such objects.
     */
    registerMetric(metric: { name: string; type: string; get(): unknown; getForPromString?(): unknown }): void;
  }
}
