// The component definition: apps install it with `app.use(workpool, { name })`.
import { defineComponent } from "convex/server";

const component = defineComponent("workpool");

export default component;
