/**
 * Flow-control keys are per account: internally a lane is `<account id>/<key>`, so two accounts
 * using the same key never share a bucket. Account ids and keys never contain "/".
 */
export const laneKey = (accountId: string, key: string) => `${accountId}/${key}`;
export const lanePrefix = (accountId: string) => `${accountId}/`;
