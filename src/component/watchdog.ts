/**
 * Forwarding for the layout before 0.2.0: `watchdog:*` calls that a deployment of the previous release
 * stored (scheduled watchdog checks) still run after an upgrade. The code lives in `mainLoop/watchdog.ts`. Calls nothing
 * else and owns nothing. Remove after 2027-03-01, one release after 0.2.0, when every call
 * scheduled under the old layout has long run (test/layoutForwarding.test.ts checks it until then).
 */
export { check, checkWakes } from "./mainLoop/watchdog.js";
