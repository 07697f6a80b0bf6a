/**
 * A reason svcd cannot start that the user can fix: the message names the path or value at fault
 * and what to do. It becomes one line on stderr and exit status 2, never a stack trace.
 */
export class StartError extends Error {}
