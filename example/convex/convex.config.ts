// The app's component tree: the work pool installed twice, as two independent pools with their own
// tables, config and parallelism.
import { defineApp } from "convex/server";
import workpool from "convex-workpool/convex.config.js";

const app = defineApp();
app.use(workpool, { name: "emailPool" });
app.use(workpool, { name: "scrapePool" });

export default app;
