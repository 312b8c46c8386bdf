// The app's HTTP routes: GET /metrics serves every pool's stats in Prometheus' text format, for a
// scraper (Prometheus, Grafana Agent, Datadog's OpenMetrics check) to graph and alert on; POST
// /provider/events is the email provider's webhook (below).
//
// It answers only a request that carries the deployment's METRICS_TOKEN as a bearer token
// (`npx convex env set METRICS_TOKEN <a long random string>`, and the same in the scraper's
// config); anything else, and any request while the variable is unset, gets 401 and no figures.
import { httpRouter } from "convex/server";
import { METRICS_CONTENT_TYPE, workpoolMetrics } from "convex-workpool";
import { internal } from "./_generated/api.js";
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

// The (fake) email provider's webhook (provider.ts, deliveries.ts): a POST signed with the shared
// PROVIDER_WEBHOOK_SECRET, whose event updates the app's row and completes the waiting job in one
// mutation. A duplicate delivery of the same event is harmless: the pool returns false.
http.route({
  path: "/provider/events",
  method: "POST",
  handler: httpAction(async (ctx, request) => {
    // eslint-disable-next-line @convex-dev/no-process-env -- kept to what every Convex version reads
    const secret = process.env.PROVIDER_WEBHOOK_SECRET;
    if (!secret || request.headers.get("Authorization") !== `Bearer ${secret}`) {
      return new Response("unauthorized", { status: 401 });
    }
    const body = (await request.json()) as { reference?: unknown; event?: unknown };
    const { reference, event } = body;
    if (typeof reference !== "string" || (event !== "delivered" && event !== "bounced")) {
      return new Response("bad event", { status: 400 });
    }
    const taken = await ctx.runMutation(internal.deliveries.recordEvent, { reference, event });
    return Response.json({ taken });
  }),
});

export default http;
