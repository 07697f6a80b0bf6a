import type { Elysia } from "elysia";

/** Any Elysia app or route plugin, whatever its typed context: what the HTTP apps are built from. */
export type RoutePlugin = Elysia<any, any, any, any, any, any, any>;
