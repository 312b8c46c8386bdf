// The app's component tree: the work pool installed three times, as independent pools with their own
// tables, config and parallelism (llmPool runs the executor's tasks: see pools.ts and llm.ts).
import { defineApp } from "convex/server";
import workpool from "convex-workpool/convex.config.js";

const app = defineApp();
app.use(workpool, { name: "emailPool" });
app.use(workpool, { name: "scrapePool" });
app.use(workpool, { name: "llmPool" });

export default app;
