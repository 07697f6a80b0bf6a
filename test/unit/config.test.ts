import { describe, expect, test } from "bun:test";
import { ConfigError, DEFAULT_ACCOUNT, defaultWorkers, parseCommandLine } from "../../src/config/config.ts";
import { parseConfigFile } from "../../src/config/config-file.ts";

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
