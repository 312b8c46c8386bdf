/**
 * Registers the component with a `convexTest` instance, for apps' own tests:
 * `import workpool from "convex-workpool/test"; workpool.register(t, "emailPool");`
 */
/// <reference types="vite/client" />
import type { TestConvex } from "convex-test";
import type { GenericSchema, SchemaDefinition } from "convex/server";
import schema from "./component/schema.js";

const modules = import.meta.glob("./component/**/*.ts");

/**
 * @param t the test instance, from `convexTest(...)`.
 * @param name the name the app installs the component under (default "workpool").
 */
export function register(
  t: TestConvex<SchemaDefinition<GenericSchema, boolean>>,
  name: string = "workpool",
): void {
  t.registerComponent(name, schema, modules);
}

export default { register, schema, modules };
