// The app's component tree: the work pool installed twice, as two independent pools with their own
// tables, config and parallelism. In your own app import it from "convex-workpool/convex.config.js";
// here it comes from the source tree because the package is not installed into itself.
import { defineApp } from "convex/server";
import workpool from "../../src/component/convex.config.js";

const app = defineApp();
app.use(workpool, { name: "emailPool" });
app.use(workpool, { name: "scrapePool" });

export default app;
