import { describe, expect, test } from "bun:test";
import { ConfigError, DEFAULT_ACCOUNT, defaultWorkers, parseCommandLine } from "../../src/config/config.ts";
import { parseConfigFile } from "../../src/config/config-file.ts";
import { DEV_ACCOUNT } from "../../src/config/dev-mode.ts";

const run = (argv: string[], env: Record<string, string> = {}) => {
  const parsed = parseCommandLine(argv, env, "/work/dir");
  if (parsed.kind !== "run") throw new Error("expected a run config");
  return parsed.config;
};

describe("configuration precedence", () => {
  test("defaults", () => {
    const c = run([]);
    expect(c.port).toBe(8080);
    expect(c.host).toBe("127.0.0.1");
    expect(c.dbPath).toBe("/work/dir/data/svcd.sqlite");
    expect(c.dialect).toBe("svc");
    expect(c.defaultAccount).toEqual(DEFAULT_ACCOUNT);
  });

  test("environment overrides defaults, flags override environment", () => {
    expect(run([], { SVC_PORT: "9000" }).port).toBe(9000);
    expect(run(["--port", "9100"], { SVC_PORT: "9000" }).port).toBe(9100);
    expect(run(["--port=0"], { SVC_PORT: "9000" }).port).toBe(0);
    expect(run(["--log-level", "debug"], { SVC_LOG_LEVEL: "error" }).logLevel).toBe("debug");
  });

  test("--region: US-EAST-1 by default; written as the hosted service writes it", () => {
    expect(run([]).region).toBe("US-EAST-1");
    expect(run(["--region", "eu_central_1"]).region).toBe("EU-CENTRAL-1");
    expect(run([], { SVC_REGION: "AP-SOUTHEAST-1" }).region).toBe("AP-SOUTHEAST-1");
  });

  test("--memory keeps nothing on disk; --db names the file", () => {
    expect(run(["--memory"]).dbPath).toBeNull();
    expect(run(["--db", "/tmp/x.sqlite"]).dbPath).toBe("/tmp/x.sqlite");
    expect(run([], { SVC_MEMORY: "true" }).dbPath).toBeNull();
  });

  test("account variables override the default account", () => {
    const c = run([], { SVC_TOKEN: "t1", SVC_READONLY_TOKEN: "r1", SVC_EMAIL: "a@b.c", SVC_API_KEY: "k", SVC_USER_ID: "u1", SVC_PLAN: "free", SVC_CURRENT_SIGNING_KEY: "sig_a", SVC_NEXT_SIGNING_KEY: "sig_b" });
    expect(c.defaultAccount).toEqual({ token: "t1", readOnlyToken: "r1", email: "a@b.c", apiKey: "k", userId: "u1", plan: "free", currentSigningKey: "sig_a", nextSigningKey: "sig_b" });
  });

  test("help and version", () => {
    const help = parseCommandLine(["--help"], {});
    expect(help.kind).toBe("help");
    if (help.kind === "help") for (const flag of ["--port", "--db", "--memory", "--config", "--management-port", "--log-format", "--retry-delay-scale", "--clock", "--dialect"]) expect(help.text).toContain(flag);
    expect(parseCommandLine(["--version"], {}).kind).toBe("version");
  });
});

describe("svcd dev", () => {
  const dev = (argv: string[], env: Record<string, string> = {}) => {
    const parsed = parseCommandLine(["dev", ...argv], env, "/work/dir");
    if (parsed.kind !== "run" || !parsed.dev) throw new Error("expected a dev run");
    return parsed.config;
  };

  test("the upstash dialect on 8080, in memory, with exactly the official dev server's credentials", () => {
    const c = dev([]);
    expect({ port: c.port, dialect: c.dialect, db: c.dbPath }).toEqual({ port: 8080, dialect: "upstash", db: null });
    expect(c.defaultAccount).toMatchObject({
      token: "eyJVc2VySUQiOiJkZWZhdWx0VXNlciIsIlBhc3N3b3JkIjoiZGVmYXVsdFBhc3N3b3JkIn0=",
      currentSigningKey: "sig_7kYjw48mhY7kAjqNGcy6cr29RJ6r",
      nextSigningKey: "sig_5ZB6DVzB1wjE8S6rZ7eenA8Pdnhs",
      userId: "defaultUser",
    });
  });

  test("the port: QSTASH_DEV_PORT (where the SDKs look) over SVC_PORT, a flag over both, in the dev server's spelling too", () => {
    expect(dev([], { QSTASH_DEV_PORT: "8081", SVC_PORT: "9000" }).port).toBe(8081);
    expect(dev([], { SVC_PORT: "9000" }).port).toBe(8080);
    expect(dev(["-port=8082"], { QSTASH_DEV_PORT: "8081" }).port).toBe(8082);
    expect(dev(["-port", "8083"]).port).toBe(8083);
    expect(dev(["--port", "8084"]).port).toBe(8084);
  });

  test("exported SVC_* credentials and database cannot make the SDKs miss it; --db and other settings still apply", () => {
    const c = dev([], { SVC_TOKEN: "mine", SVC_CURRENT_SIGNING_KEY: "sig_x", SVC_DB: "/srv/x.sqlite", SVC_DIALECT: "svc", SVC_HOST: "0.0.0.0" });
    expect({ account: c.defaultAccount, db: c.dbPath, dialect: c.dialect, host: c.host }).toEqual({ account: DEV_ACCOUNT, db: null, dialect: "upstash", host: "0.0.0.0" });
    expect(dev(["-db=/tmp/dev.sqlite"]).dbPath).toBe("/tmp/dev.sqlite");
    expect(dev(["--clock", "manual"]).clock).toBe("manual");
  });

  test("a bad QSTASH_DEV_PORT or another dialect is refused, naming it", () => {
    expect(() => dev([], { QSTASH_DEV_PORT: "eighty" })).toThrow(/^QSTASH_DEV_PORT: must be a port number/);
    expect(() => dev(["--dialect", "svc"])).toThrow(/^--dialect: svcd dev always speaks the upstash dialect/);
    expect(() => dev(["-log-port=9000"])).toThrow(/^--log-port=9000: unknown option/);
  });

  test("plain svcd reads a single-dash word as an unknown option, as before", () => {
    expect(() => run(["-port=8081"])).toThrow(/^-port=8081: unknown option/);
  });
});

describe("svcd health", () => {
  const health = (argv: string[], env: Record<string, string> = {}) => {
    const parsed = parseCommandLine(["health", ...argv], env);
    if (parsed.kind !== "health") throw new Error("expected health");
    return parsed.url;
  };
  test("asks the server the same settings start: port and host from flags or variables, a wildcard host on loopback", () => {
    expect(health([])).toBe("http://127.0.0.1:8080/__svc/health");
    expect(health([], { SVC_PORT: "9000", SVC_HOST: "0.0.0.0" })).toBe("http://127.0.0.1:9000/__svc/health");
    expect(health(["--port", "9001", "--host", "::1"])).toBe("http://[::1]:9001/__svc/health");
    expect(health([], { QSTASH_DEV_PORT: "8081" })).toBe("http://127.0.0.1:8081/__svc/health");
    expect(health([], { QSTASH_DEV_PORT: "8081", SVC_PORT: "9000" })).toBe("http://127.0.0.1:9000/__svc/health");
  });
});

describe("configuration errors name the flag", () => {
  const cases: Array<[string[], Record<string, string>, string]> = [
    [["--port", "abc"], {}, "--port"],
    [["--port", "70000"], {}, "--port"],
    [["--port"], {}, "--port"],
    [["--log-format", "xml"], {}, "--log-format"],
    [["--log-level", "loud"], {}, "--log-level"],
    [["--retry-delay-scale", "-1"], {}, "--retry-delay-scale"],
    [["--clock", "fast"], {}, "--clock"],
    [["--dialect", "sqs"], {}, "--dialect"],
    [["--region", "moon base"], {}, "--region"],
    [["--workers", "0"], {}, "--workers"],
    [["--memory=yes"], {}, "--memory"],
    [["--bogus"], {}, "--bogus"],
    [[], { SVC_PORT: "x" }, "SVC_PORT"],
    [[], { SVC_PLAN: "gold" }, "SVC_PLAN"],
    [[], { SVC_MEMORY: "perhaps" }, "SVC_MEMORY"],
  ];
  for (const [argv, env, flag] of cases) {
    test(`${argv.join(" ") || JSON.stringify(env)} → ${flag}`, () => {
      let error: unknown;
      try {
        parseCommandLine(argv, env);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).flag).toBe(flag);
      expect((error as ConfigError).message).toStartWith(flag);
    });
  }
});

describe("config file", () => {
  const account = { email: "a@x.io", apiKey: "k", userId: "u", token: "t" };
  test("accepts accounts and plan overrides", () => {
    const file = parseConfigFile({ plans: { free: { maxRetries: 5 } }, accounts: [{ ...account, plan: "free" }] });
    expect(file.accounts?.[0]?.plan).toBe("free");
  });
  test("rejects unknown fields, bad plans and repeated tokens, naming the place", () => {
    expect(() => parseConfigFile({ acounts: [] })).toThrow(/--config/);
    expect(() => parseConfigFile({ accounts: [{ ...account, plan: "gold" }] })).toThrow("accounts[0].plan: must be one of");
    expect(() => parseConfigFile({ accounts: [account, { ...account, userId: "v", email: "b@x.io" }] })).toThrow("accounts[1].token: repeats accounts[0]");
  });
});

test("delivery workers by default: one on up to two cores, two above", () => {
  expect([1, 2, 3, 4, 64].map((cores) => defaultWorkers(cores))).toEqual([1, 1, 2, 2, 2]);
});
