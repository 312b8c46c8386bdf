// The full-scale runs (`npm run test:slow`, TEST_SCALE=full) use the bench's per-table scan of
// convex-test's database (bench/fastTables.ts): every query gets the same documents as from
// convex-test's scan of the whole database (test/fastTables.test.ts checks that), in time that
// does not grow with the other tables' rows, which at 10,000 jobs is most of a spec's time.
// `npm test` runs on convex-test's own scan: at its sizes the patch saves nothing.
import { installFastTables } from "../bench/fastTables.js";
import { FULL_SCALE } from "./scale.js";

if (FULL_SCALE) installFastTables();
