import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { CANCEL_FILTERS, DLQ_FILTERS, LOG_FILTERS, parseFilter, type FilterOptions } from "../../src/filters/filter.ts";
import { applyFilter } from "../../src/filters/sql.ts";
import { urlPartsSql } from "../../src/filters/url-parts.ts";
import { Where } from "../../src/store/where.ts";

const list: FilterOptions = { accepts: LOG_FILTERS, strict: false, control: [] };
const bulk: FilterOptions = { accepts: DLQ_FILTERS, strict: true, control: ["count", "cursor", "qstash_token"] };
const q = (text: string) => new URLSearchParams(text);
const refused = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return (error as { status?: number; message: string });
  }
  throw new Error("expected a refusal");
};

describe("parseFilter: several values", () => {
  test("repeated keys and commas give the same list, in order, without duplicates", () => {
    expect(parseFilter({ query: q("label=a&label=b") }, list).labels).toEqual(["a", "b"]);
    expect(parseFilter({ query: q("label=a,b") }, list).labels).toEqual(["a", "b"]);
    expect(parseFilter({ query: q("label=a,b&label=c&label=a") }, list).labels).toEqual(["a", "b", "c"]);
    expect(parseFilter({ query: q("label= a , ,b") }, list).labels).toEqual(["a", "b"]);
  });

  test("every filter key maps to its list, and the JSON body adds to the query", () => {
    const f = parseFilter(
      { query: q("topicName=g1&queueName=q1,q2&flowControlKey=k&scheduleId=s&callerIp=1.2.3.4&messageIds=m1,m2"), body: { messageId: "m3", label: ["x", "y"] } },
      list,
    );
    expect(f).toEqual({
      topicNames: ["g1"],
      queueNames: ["q1", "q2"],
      flowControlKeys: ["k"],
      scheduleIds: ["s"],
      callerIps: ["1.2.3.4"],
      messageIds: ["m1", "m2", "m3"],
      labels: ["x", "y"],
    });
  });

  test("a comma inside a URL or a path stays; only one before the next URL or path separates", () => {
    expect(parseFilter({ query: q(`url=${encodeURIComponent("https://a.example/x?ids=1,2,http://b.example")}`) }, list).urls).toEqual([
      "https://a.example/x?ids=1,2",
      "http://b.example",
    ]);
    expect(parseFilter({ query: q("path=/a,b,/c") }, list).paths).toEqual(["/a,b", "/c"]);
  });

  test("hosts compare in lower case; states are kept for the logs to check", () => {
    expect(parseFilter({ query: q("host=A.Example,b.example:8080") }, list).hosts).toEqual(["a.example", "b.example:8080"]);
    expect(parseFilter({ query: q("state=DELIVERED,FAILED") }, list).states).toEqual(["DELIVERED", "FAILED"]);
  });

  test("numbers: responseStatus takes several, a date one; both from the query or the body", () => {
    expect(parseFilter({ query: q("responseStatus=500,0"), body: { responseStatus: [404] } }, { ...bulk }).responseStatuses).toEqual([500, 0, 404]);
    expect(parseFilter({ query: q("fromDate=1700000000000"), body: { toDate: 1800000000000 } }, list)).toEqual({ fromDate: 1700000000000, toDate: 1800000000000 });
    expect(refused(() => parseFilter({ query: q("fromDate=1,2") }, list)).message).toContain("fromDate");
    expect(refused(() => parseFilter({ query: q("fromDate=yesterday") }, list)).status).toBe(400);
    expect(refused(() => parseFilter({ query: q("responseStatus=1000") }, bulk)).message).toContain("responseStatus");
  });

  test("a failed workflow run's creation times are integers of Unix ms; failure function states are one of four", () => {
    const f = parseFilter({ query: q("workflowCreatedAt=1736340463061,1736340463062&failureFunctionState=CALLBACK_FAIL,CALLBACK_CANCELED") }, bulk);
    expect(f.workflowCreatedAts).toEqual([1736340463061, 1736340463062]);
    expect(f.failureFunctionStates).toEqual(["CALLBACK_FAIL", "CALLBACK_CANCELED"]);
    expect(refused(() => parseFilter({ query: q("workflowCreatedAt=yesterday") }, bulk)).status).toBe(400);
    const unknown = refused(() => parseFilter({ query: q("failureFunctionState=CALLBACK_FAILED") }, { ...list, accepts: DLQ_FILTERS }));
    expect(unknown.status).toBe(400);
    expect(unknown.message).toContain("CALLBACK_INPROGRESS, CALLBACK_SUCCESS, CALLBACK_FAIL, CALLBACK_CANCELED");
  });

  test("a body value of the wrong type is 400 naming the filter", () => {
    expect(refused(() => parseFilter({ query: q(""), body: { dlqIds: [1, 2] } }, bulk)).message).toContain("dlqIds");
    expect(refused(() => parseFilter({ query: q(""), body: { label: { a: 1 } } }, list)).message).toContain("label");
  });
});

describe("parseFilter: unknown keys", () => {
  test("a listing ignores keys it does not know, and empty values", () => {
    expect(parseFilter({ query: q("lable=x&label=&count=5&cursor=9"), body: { whatever: [1] } }, list)).toEqual({});
  });

  test("a bulk operation refuses an unknown key, naming it, from the query or the body", () => {
    const typo = refused(() => parseFilter({ query: q("lable=x") }, bulk));
    expect(typo.status).toBe(400);
    expect(typo.message).toContain('"lable"');
    expect(refused(() => parseFilter({ query: q(""), body: { urll: "https://a.example" } }, bulk)).message).toContain('"urll"');
    // Filters of another endpoint are unknown here: state belongs to the logs, responseStatus to the DLQ.
    expect(refused(() => parseFilter({ query: q("state=FAILED") }, bulk)).message).toContain('"state"');
    expect(refused(() => parseFilter({ query: q("responseStatus=500") }, { ...bulk, accepts: CANCEL_FILTERS })).message).toContain('"responseStatus"');
  });

  test("a bulk operation accepts its control keys and refuses a filter without a value", () => {
    expect(parseFilter({ query: q("count=1&cursor=5&qstash_token=t&dlqIds=1-0") }, bulk)).toEqual({ dlqIds: ["1-0"] });
    expect(refused(() => parseFilter({ query: q("label=") }, bulk)).message).toContain('"label" has no value');
    expect(refused(() => parseFilter({ query: q(""), body: { url: [] } }, bulk)).message).toContain('"url" has no value');
  });
});

describe("URL parts in SQL", () => {
  const db = new Database(":memory:");
  db.run("CREATE TABLE t (url TEXT)");
  const parts = (url: string) => {
    db.run("DELETE FROM t");
    db.run("INSERT INTO t VALUES (?)", [url]);
    return db.query<{ j: string }, []>(`SELECT (SELECT json_array(host_port, host_name, path) FROM ${urlPartsSql("url")}) AS j FROM t`).get()!.j;
  };

  test("host, host with port and path match what the URL parser reads", () => {
    for (const url of [
      "https://a.example",
      "https://a.example/",
      "https://a.example?x=1",
      "https://a.example#top",
      "https://A.Example/x/y?z=1#f",
      "http://user:pw@h.example:8080/a/b/",
      "http://127.0.0.1:3000/x,y/z?q=/not/path",
      "http://[::1]:8080/v6",
    ]) {
      const u = new URL(url);
      expect({ url, parts: JSON.parse(parts(url)) }).toEqual({ url, parts: [u.host, u.hostname, u.pathname] });
    }
  });
});

describe("applyFilter", () => {
  const db = new Database(":memory:");
  db.run(`CREATE TABLE m (id TEXT, account_id TEXT, url TEXT, topic_name TEXT, schedule_id TEXT, queue_name TEXT,
    label TEXT, flow_key TEXT, caller_ip TEXT, created_at INTEGER)`);
  const rows = [
    ["1", "https://a.example/x", "a,b", "k1", 10],
    ["2", "https://a.example/y", "b", "k2", 20],
    ["3", "https://b.example/x", "c", "k1", 30],
    ["4", "http://b.example:8080", null, null, 40],
  ] as const;
  for (const [id, url, label, key, at] of rows)
    db.run("INSERT INTO m (id, account_id, url, label, flow_key, created_at) VALUES (?, 'acc', ?, ?, ?, ?)", [id, url, label, key, at]);
  const ids = (text: string) => {
    const filter = parseFilter({ query: q(text) }, { accepts: CANCEL_FILTERS, strict: true, control: [] });
    const { sql, params } = applyFilter(new Where("account_id", "acc"), filter, { messageId: "id", time: "created_at" }).select("m", "id", 100);
    return db.query<{ id: string }, Record<string, string | number>>(sql).all(params).map((r) => r.id);
  };

  test("OR within one filter, AND across filters", () => {
    expect(ids("label=a")).toEqual(["1"]);
    expect(ids("label=b")).toEqual(["1", "2"]);
    expect(ids("label=a,c")).toEqual(["1", "3"]);
    expect(ids("label=b&flowControlKey=k1")).toEqual(["1"]);
    expect(ids("flowControlKey=k1,k2&fromDate=15")).toEqual(["2", "3"]);
  });

  test("host (with or without port) and path, exact", () => {
    expect(ids("host=a.example")).toEqual(["1", "2"]);
    expect(ids("host=B.EXAMPLE")).toEqual(["3", "4"]);
    expect(ids("host=b.example:8080")).toEqual(["4"]);
    expect(ids("path=/x")).toEqual(["1", "3"]);
    expect(ids("path=/")).toEqual(["4"]);
    expect(ids("host=a.example&path=/x,/")).toEqual(["1"]);
    expect(ids("host=example")).toEqual([]);
    expect(ids("path=/x/")).toEqual([]);
  });
});
