// The app's HTTP routes: GET /metrics serves every pool's stats in Prometheus' text format, for a
// scraper (Prometheus, Grafana Agent, Datadog's OpenMetrics check) to graph and alert on.
//
// It answers only a request that carries the deployment's METRICS_TOKEN as a bearer token
// (`npx convex env set METRICS_TOKEN <a long random string>`, and the same in the scraper's
// config); anything else, and any request while the variable is unset, gets 401 and no figures.
import { httpRouter } from "convex/server";
import { METRICS_CONTENT_TYPE, workpoolMetrics } from "convex-workpool";
import { httpAction } from "./_generated/server.js";
import { emailPool, llmPool, scrapePool } from "./pools.js";

const http = httpRouter();

http.route({
  path: "/metrics",
  method: "GET",
  handler: httpAction(async (ctx, request) => {
    // eslint-disable-next-line @convex-dev/no-process-env -- kept to what every Convex version reads
    const token = process.env.METRICS_TOKEN;
    if (!token || request.headers.get("Authorization") !== `Bearer ${token}`) {
      return new Response("unauthorized", { status: 401 });
    }
    const body = workpoolMetrics({
      emailPool: await emailPool.stats(ctx),
      scrapePool: await scrapePool.stats(ctx),
      llmPool: await llmPool.stats(ctx),
    });
    return new Response(body, { headers: { "Content-Type": METRICS_CONTENT_TYPE } });
  }),
});

export default http;
