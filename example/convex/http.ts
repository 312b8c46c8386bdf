// The app's HTTP routes: GET /metrics serves every pool's stats in Prometheus' text format, for a
// scraper (Prometheus, Grafana Agent, Datadog's OpenMetrics check) to graph and alert on.
//
// Like the admin functions (admin.ts), this route is open to anyone who knows the deployment's URL.
// A real app should require a secret, e.g. compare the request's Authorization header with an
// environment variable set in the dashboard, and answer 401 otherwise.
import { httpRouter } from "convex/server";
import { METRICS_CONTENT_TYPE, workpoolMetrics } from "convex-workpool";
import { httpAction } from "./_generated/server.js";
import { emailPool, llmPool, scrapePool } from "./pools.js";

const http = httpRouter();

http.route({
  path: "/metrics",
  method: "GET",
  handler: httpAction(async (ctx) => {
    const body = workpoolMetrics({
      emailPool: await emailPool.stats(ctx),
      scrapePool: await scrapePool.stats(ctx),
      llmPool: await llmPool.stats(ctx),
    });
    return new Response(body, { headers: { "Content-Type": METRICS_CONTENT_TYPE } });
  }),
});

export default http;
