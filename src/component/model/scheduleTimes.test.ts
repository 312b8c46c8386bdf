// A schedule's times (scheduleTimes.ts), as API-EXTENSIONS §10 reads cron: Vixie semantics, time
// zones, and daylight-saving days in New York and Berlin, in the test runtime (@edge-runtime/vm).
import { describe, expect, it } from "vitest";
import { nextTime, offsetAt, parseCron, type Timing } from "./scheduleTimes.js";

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The times of `cron` in `timezone` from `from` (exclusive) up to `until` (inclusive). */
function timesBetween(cron: string, timezone: string, from: string, until: string): string[] {
  const timing: Timing = { kind: "cron", cron, timezone };
  const parsed = parseCron(cron);
  const times: string[] = [];
  let t = nextTime(timing, {}, at(from), parsed);
  while (t !== null && t <= at(until)) {
    times.push(iso(t)!);
    t = nextTime(timing, {}, t, parsed);
  }
  return times;
}

describe("time zones in the test runtime", () => {
  it("knows New York's and Berlin's offsets in winter and in summer", () => {
    const hour = 3_600_000;
    expect(offsetAt("America/New_York", at("2026-01-15T12:00:00Z"))).toBe(-5 * hour);
    expect(offsetAt("America/New_York", at("2026-07-15T12:00:00Z"))).toBe(-4 * hour);
    expect(offsetAt("Europe/Berlin", at("2026-01-15T12:00:00Z"))).toBe(1 * hour);
    expect(offsetAt("Europe/Berlin", at("2026-07-15T12:00:00Z"))).toBe(2 * hour);
  });
});

describe("cron semantics", () => {
  it("reads five fields as minute hour day-of-month month day-of-week, in the zone's wall clock", () => {
    expect(
      timesBetween("0 9 * * *", "Europe/Berlin", "2026-01-01T00:00:00Z", "2026-01-02T23:59:59Z"),
    ).toEqual(["2026-01-01T08:00:00.000Z", "2026-01-02T08:00:00.000Z"]);
  });

  it("reads six fields with seconds first", () => {
    expect(
      timesBetween("*/20 * * * * *", "UTC", "2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z"),
    ).toEqual(["2026-01-01T00:00:20.000Z", "2026-01-01T00:00:40.000Z", "2026-01-01T00:01:00.000Z"]);
  });

  it("ORs day-of-month and day-of-week when both are restricted", () => {
    // 2026-01-01 is a Thursday; the first Mondays are the 5th and the 12th.
    expect(
      timesBetween("0 0 1 * mon", "UTC", "2025-12-31T00:00:00Z", "2026-01-13T00:00:00Z"),
    ).toEqual(["2026-01-01T00:00:00.000Z", "2026-01-05T00:00:00.000Z", "2026-01-12T00:00:00.000Z"]);
  });

  it("takes 0 and 7 for Sunday, and day and month names in any case", () => {
    const sundays = ["2026-01-04T12:00:00.000Z", "2026-01-11T12:00:00.000Z"];
    const range = ["2026-01-01T00:00:00Z", "2026-01-12T00:00:00Z"] as const;
    expect(timesBetween("0 12 * * 0", "UTC", ...range)).toEqual(sundays);
    expect(timesBetween("0 12 * * 7", "UTC", ...range)).toEqual(sundays);
    expect(timesBetween("0 12 * JAN Sun", "UTC", ...range)).toEqual(sundays);
  });

  it("knows @hourly, @daily, @weekly (Sunday 00:00), @monthly and @yearly", () => {
    const first = (cron: string) =>
      iso(nextTime({ kind: "cron", cron, timezone: "UTC" }, {}, at("2026-01-01T00:30:00Z")));
    expect(first("@hourly")).toBe("2026-01-01T01:00:00.000Z");
    expect(first("@daily")).toBe("2026-01-02T00:00:00.000Z");
    expect(first("@weekly")).toBe("2026-01-04T00:00:00.000Z");
    expect(first("@monthly")).toBe("2026-02-01T00:00:00.000Z");
    expect(first("@yearly")).toBe("2027-01-01T00:00:00.000Z");
  });

  it("keeps to startAt and endAt, both inclusive", () => {
    const timing: Timing = { kind: "cron", cron: "0 * * * *", timezone: "UTC" };
    const bounds = { startAt: at("2026-01-01T03:00:00Z"), endAt: at("2026-01-01T05:00:00Z") };
    expect(iso(nextTime(timing, bounds, at("2026-01-01T00:00:00Z")))).toBe(
      "2026-01-01T03:00:00.000Z",
    );
    expect(iso(nextTime(timing, bounds, at("2026-01-01T04:00:00Z")))).toBe(
      "2026-01-01T05:00:00.000Z",
    );
    expect(nextTime(timing, bounds, at("2026-01-01T05:00:00Z"))).toBeNull();
  });
});

describe("intervals", () => {
  it("falls on firstAt + k × everyMs, strictly after the given instant", () => {
    const timing: Timing = { kind: "every", everyMs: 60_000, firstAt: at("2026-01-01T00:00:30Z") };
    expect(iso(nextTime(timing, {}, at("2025-12-31T00:00:00Z")))).toBe("2026-01-01T00:00:30.000Z");
    expect(iso(nextTime(timing, {}, at("2026-01-01T00:00:30Z")))).toBe("2026-01-01T00:01:30.000Z");
    expect(iso(nextTime(timing, {}, at("2026-01-01T00:05:00Z")))).toBe("2026-01-01T00:05:30.000Z");
  });
});

describe("daylight saving in America/New_York", () => {
  // 2026-03-08: 02:00 EST becomes 03:00 EDT at 07:00Z. 2026-11-01: 02:00 EDT becomes 01:00 EST at
  // 06:00Z, so 01:00–01:59 occur twice.
  const NY = "America/New_York";

  it("fires a daily 02:30 at 03:00 EDT on the spring-forward day", () => {
    expect(timesBetween("30 2 * * *", NY, "2026-03-07T00:00:00Z", "2026-03-09T23:00:00Z")).toEqual([
      "2026-03-07T07:30:00.000Z",
      "2026-03-08T07:00:00.000Z",
      "2026-03-09T06:30:00.000Z",
    ]);
  });

  it("fires several times of the gap once, at its end", () => {
    expect(
      timesBetween("*/15 2 * * *", NY, "2026-03-08T00:00:00Z", "2026-03-08T23:00:00Z"),
    ).toEqual(["2026-03-08T07:00:00.000Z"]);
    expect(
      timesBetween("*/30 * * * *", NY, "2026-03-08T06:15:00Z", "2026-03-08T07:45:00Z"),
    ).toEqual(["2026-03-08T06:30:00.000Z", "2026-03-08T07:00:00.000Z", "2026-03-08T07:30:00.000Z"]);
  });

  it("fires a daily 01:30 once on the fall-back day, at its first occurrence", () => {
    expect(timesBetween("30 1 * * *", NY, "2026-10-31T12:00:00Z", "2026-11-02T12:00:00Z")).toEqual([
      "2026-11-01T05:30:00.000Z",
      "2026-11-02T06:30:00.000Z",
    ]);
  });

  it("does not fire the repeated hour's times again", () => {
    expect(
      timesBetween("*/30 * * * *", NY, "2026-11-01T04:45:00Z", "2026-11-01T07:30:00Z"),
    ).toEqual([
      "2026-11-01T05:00:00.000Z",
      "2026-11-01T05:30:00.000Z",
      "2026-11-01T07:00:00.000Z",
      "2026-11-01T07:30:00.000Z",
    ]);
  });

  it("goes on after the repeated hour when asked from inside it", () => {
    // 06:15Z is 01:15 EST, the second pass through 01:15.
    const timing: Timing = { kind: "cron", cron: "*/30 * * * *", timezone: NY };
    expect(iso(nextTime(timing, {}, at("2026-11-01T06:15:00Z")))).toBe("2026-11-01T07:00:00.000Z");
  });
});

describe("daylight saving in Europe/Berlin", () => {
  // 2026-03-29: 02:00 CET becomes 03:00 CEST at 01:00Z. 2026-10-25: 03:00 CEST becomes 02:00 CET at
  // 01:00Z, so 02:00–02:59 occur twice.
  const BERLIN = "Europe/Berlin";

  it("fires a daily 02:30 at 03:00 CEST on the spring-forward day", () => {
    expect(
      timesBetween("30 2 * * *", BERLIN, "2026-03-28T00:00:00Z", "2026-03-30T23:00:00Z"),
    ).toEqual(["2026-03-28T01:30:00.000Z", "2026-03-29T01:00:00.000Z", "2026-03-30T00:30:00.000Z"]);
  });

  it("fires a daily 02:30 once on the fall-back day, at its first occurrence", () => {
    expect(
      timesBetween("30 2 * * *", BERLIN, "2026-10-24T12:00:00Z", "2026-10-26T12:00:00Z"),
    ).toEqual(["2026-10-25T00:30:00.000Z", "2026-10-26T01:30:00.000Z"]);
  });

  it("fires an hourly cron 23 times on the spring-forward day and 24 on the fall-back day", () => {
    const spring = timesBetween(
      "0 * * * *",
      BERLIN,
      "2026-03-28T22:59:59Z",
      "2026-03-29T21:59:59Z",
    );
    const fall = timesBetween("0 * * * *", BERLIN, "2026-10-24T21:59:59Z", "2026-10-25T22:59:59Z");
    expect(spring).toHaveLength(23);
    expect(fall).toHaveLength(24);
    expect(new Set(fall).size).toBe(fall.length);
  });
});
