/** One labelled series: a count per bucket (not cumulative), the sum and the count. */
interface Series {
  labels: Record<string, string>;
  buckets: number[];
  sum: number;
  count: number;
}

/**
 * A Prometheus histogram for the delivery path, exposed exactly as prom-client's Histogram (the
 * same lines in the same order; registered in its Registry): an observation is a Map lookup by the
 * one label value and a few additions. prom-client's own observe builds a labels object, validates
 * and hashes it for every observation: with the delivered counter, 0.6 µs of the main thread per
 * delivered message against 0.1 µs counted here (measured in isolation).
 */
export class CountedHistogram {
  readonly type = "histogram";
  readonly aggregator = "sum";
  private readonly series = new Map<string, Series>();

  /** The one label `observe` fills (null: none, or several that only `observeSeries` fills). */
  private readonly labelName: string | null;

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly upperBounds: readonly number[],
    /** One label, several (observed with `observeSeries`), or none: `observe`'s value is then always "". */
    labels: string | readonly string[] | null,
  ) {
    this.labelName = typeof labels === "string" ? labels : null;
    // As prom-client: a histogram without labels shows its one series, zero, before any observation.
    if (labels === null) this.series.set("", this.emptySeries({}));
  }

  private emptySeries(labels: Record<string, string>): Series {
    return { labels, buckets: this.upperBounds.map(() => 0), sum: 0, count: 0 };
  }

  /** `labelValue` is ignored when the histogram has no label. */
  observe(labelValue: string, value: number): void {
    if (this.labelName === null) this.observeSeries("", value, () => ({}));
    else this.observeSeries(labelValue, value, () => ({ [this.labelName!]: labelValue }));
  }

  /**
   * An observation of the series `key` stands for (one key per combination of label values, chosen
   * by the caller); `labels` is asked for only when the series is new (its order is the lines' order).
   */
  observeSeries(key: string, value: number, labels: () => Record<string, string>): void {
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
    let s = this.series.get(key);
    if (!s) {
      s = this.emptySeries(labels());
      this.series.set(key, s);
    }
    const bounds = this.upperBounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]!) {
        s.buckets[i]!++;
        break;
      }
    }
    s.sum += value;
    s.count += 1;
  }

  /** What the Registry prints: as prom-client's Histogram, the series' labels shared by its lines. */
  getForPromString() {
    const bucket = `${this.name}_bucket`;
    type Line = { labels: object; sharedLabels: object; value: number; metricName: string; exemplar?: null };
    const values: Line[] = [];
    for (const s of this.series.values()) {
      let acc = 0;
      this.upperBounds.forEach((le, i) => {
        acc += s.buckets[i]!;
        values.push({ labels: { le }, sharedLabels: s.labels, value: acc, metricName: bucket, exemplar: null });
      });
      values.push({ labels: { le: "+Inf" }, sharedLabels: s.labels, value: s.count, metricName: bucket, exemplar: null });
      values.push({ labels: {}, sharedLabels: s.labels, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: {}, sharedLabels: s.labels, value: s.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** As prom-client's `get` (the JSON form): each line's labels in one object. */
  get() {
    const data = this.getForPromString();
    const values = data.values.map(({ labels, sharedLabels, ...rest }) => ({ ...rest, labels: { ...labels, ...sharedLabels } }));
    return { ...data, values };
  }
}
