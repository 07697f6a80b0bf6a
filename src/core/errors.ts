/** An error that maps straight to an HTTP answer `{"error": message}`. Domain logic throws these. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const badRequest = (message: string) => new HttpError(400, message);
export const notFound = (message: string) => new HttpError(404, message);
export const quotaExceeded = (message: string) => new HttpError(412, message);
export const unavailable = (message: string) => new HttpError(503, message);
