import { describe, expect, test } from "bun:test";
import { acceptedTokens, hostedToken, readHostedToken } from "../../src/accounts/hosted-token.ts";

describe("hosted-shape tokens", () => {
  test("a hosted token is base64 JSON with UserID and Password, as the workflow SDK decodes it", () => {
    const token = hostedToken("user-1", "secret");
    expect(JSON.parse(atob(token))).toEqual({ UserID: "user-1", Password: "secret" });
    expect(readHostedToken(token)).toEqual({ userId: "user-1", password: "secret" });
    expect(readHostedToken("svcd_dev_token")).toBeUndefined();
    expect(readHostedToken(btoa('{"Password":"p"}'))).toBeUndefined();
    expect(readHostedToken(btoa("not json"))).toBeUndefined();
  });

  test("in the hosted dialect an account answers to its token in both shapes; elsewhere only as configured", () => {
    expect(acceptedTokens("plain", "u", false)).toEqual(["plain"]);
    expect(acceptedTokens("plain", "u", true)).toEqual(["plain", hostedToken("u", "plain")]);
    expect(acceptedTokens(hostedToken("u", "p"), "u", true)).toEqual([hostedToken("u", "p"), "p"]);
    // A hosted-shape token naming another user is only itself: its password is no credential here.
    expect(acceptedTokens(hostedToken("other", "p"), "u", true)).toEqual([hostedToken("other", "p")]);
  });
});
