/** Money and rates are floats; round away binary noise (0.1 + 0.2) so equal sums print equal. */
export const roundAmount = (x: number) => Math.round(x * 1e9) / 1e9;
