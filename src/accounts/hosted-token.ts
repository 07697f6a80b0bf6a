/**
 * The hosted service's tokens are base64 of JSON `{"UserID": ..., "Password": ...}`, and its
 * workflow SDK reads the user id out of the token (`context.createWebhook` builds the webhook URL
 * with it). In the hosted dialect svcd accepts an account's token in both shapes: as configured,
 * and wrapped that way.
 */
export function hostedToken(userId: string, password: string): string {
  return Buffer.from(JSON.stringify({ UserID: userId, Password: password })).toString("base64");
}

/** `{UserID, Password}` when `token` is in the hosted shape, else undefined. */
export function readHostedToken(token: string): { userId: string; password?: string } | undefined {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(token)) return undefined;
  try {
    const value = JSON.parse(Buffer.from(token, "base64").toString("utf8")) as { UserID?: unknown; Password?: unknown };
    if (typeof value?.UserID !== "string" || !value.UserID) return undefined;
    return { userId: value.UserID, password: typeof value.Password === "string" ? value.Password : undefined };
  } catch {
    return undefined;
  }
}

/**
 * Every token an account answers to. In the hosted dialect: a plain token also in its hosted
 * shape, and a hosted-shape token of the account's own user id also as its password alone.
 */
export function acceptedTokens(token: string, userId: string, hosted: boolean): string[] {
  if (!hosted) return [token];
  const read = readHostedToken(token);
  if (!read) return [token, hostedToken(userId, token)];
  return read.userId === userId && read.password ? [token, read.password] : [token];
}
