/**
 * The dashboard's groups panel (API-EXTENSIONS §12): the progress of the groups the operator
 * watches — total, pending, running, succeeded, failed, canceled, a bar of the finished share,
 * open or closed, done and when — from the admin `group` query, with "cancel group" through the
 * admin `cancelGroup`, and a field to watch a group by its id. Never fetches or subscribes (the
 * wiring does, as for the other views); its only state is the id being typed.
 */
import { useState } from "react";
import type { GroupStatus } from "../client/index.js";
import { formatCount, formatTime } from "./format.js";

/** A group the panel shows: its id, and its status (undefined while loading; null for an id the
 * pool does not know, or whose status has expired; an Error when the query failed). */
export type WatchedGroup = { id: string; status: GroupStatus | null | undefined | Error };

/** The groups panel's data: the groups watched, and how to watch or drop one. */
export type GroupsPanel = {
  watched: WatchedGroup[];
  watch: (id: string) => void;
  unwatch: (id: string) => void;
};

/** What the panel can do to a group: the admin API's `cancelGroup`. It may reject. */
export type GroupActions = { cancelGroup: (id: string) => Promise<unknown> };

/** A group's finished jobs out of its total, as a whole percentage (100 for an empty group). */
export function finishedPercent(status: GroupStatus): number {
  const finished = status.succeeded + status.failed + status.canceled;
  return status.total === 0 ? 100 : Math.floor((finished / status.total) * 100);
}

/** Where the group is: taking jobs, closed and running, or done (and when). */
export function groupStateText(status: GroupStatus): string {
  if (status.done) {
    return status.finishedAt === undefined ? "done" : `done ${formatTime(status.finishedAt)}`;
  }
  return status.closed ? "closed, running" : "open";
}

/** The groups panel: a row per group watched, and the field to watch another. */
export function GroupsView(props: {
  panel: GroupsPanel;
  act: (run: () => Promise<unknown>) => void;
  actions?: GroupActions;
}) {
  const { panel, act, actions } = props;
  const [typed, setTyped] = useState("");
  const id = typed.trim();
  return (
    <>
      {panel.watched.length === 0 ? (
        <p className="wpd-sub">No group watched. Paste a group id to follow its progress.</p>
      ) : (
        <table data-testid="groups">
          <thead>
            <tr>
              <th>group</th>
              <th>progress</th>
              <th>total</th>
              <th>pending</th>
              <th>running</th>
              <th>succeeded</th>
              <th>failed</th>
              <th>canceled</th>
              <th>state</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {panel.watched.map((group) => (
              <GroupRow key={group.id} group={group} panel={panel} act={act} actions={actions} />
            ))}
          </tbody>
        </table>
      )}
      <div className="wpd-bar">
        <input
          aria-label="group id"
          data-testid="group-id-input"
          style={{ width: 260 }}
          placeholder="group id"
          value={typed}
          onChange={(event) => setTyped(event.target.value)}
        />
        <button
          data-testid="watch-group"
          disabled={id === ""}
          onClick={() => {
            panel.watch(id);
            setTyped("");
          }}
        >
          Watch
        </button>
      </div>
    </>
  );
}

function GroupRow(props: {
  group: WatchedGroup;
  panel: GroupsPanel;
  act: (run: () => Promise<unknown>) => void;
  actions?: GroupActions;
}) {
  const { group, panel, act, actions } = props;
  const { status } = group;
  const drop = (
    <button data-action="unwatch-group" onClick={() => panel.unwatch(group.id)}>
      Drop
    </button>
  );
  if (status === undefined || status === null || status instanceof Error) {
    const text =
      status === undefined
        ? "Loading…"
        : status === null
          ? "unknown to the pool, or expired"
          : status.message;
    return (
      <tr data-group={group.id}>
        <td className="wpd-note">{group.id}</td>
        <td colSpan={8} className={status instanceof Error ? "wpd-bad" : "wpd-note"}>
          {text}
        </td>
        <td>{drop}</td>
      </tr>
    );
  }
  const percent = finishedPercent(status);
  return (
    <tr data-group={group.id}>
      <td>
        {status.name ?? "(no name)"}
        <div className="wpd-note">{group.id}</div>
      </td>
      <td>
        <progress max={100} value={percent} data-figure="group.percent" /> {percent}%
      </td>
      <td data-figure="group.total">{formatCount(status.total)}</td>
      <td data-figure="group.pending">{formatCount(status.pending)}</td>
      <td data-figure="group.running">{formatCount(status.running)}</td>
      <td className="wpd-ok" data-figure="group.succeeded">
        {formatCount(status.succeeded)}
      </td>
      <td className="wpd-bad" data-figure="group.failed">
        {formatCount(status.failed)}
      </td>
      <td data-figure="group.canceled">{formatCount(status.canceled)}</td>
      <td className={status.done ? "wpd-ok" : undefined} data-figure="group.state">
        {groupStateText(status)}
      </td>
      <td>
        {actions && !status.done && (
          <button
            data-action="cancel-group"
            onClick={() => act(() => actions.cancelGroup(group.id))}
          >
            Cancel group
          </button>
        )}{" "}
        {drop}
      </td>
    </tr>
  );
}
