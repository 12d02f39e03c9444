/**
 * The status bar item without VS Code: the server's work-done progress (indexing,
 * embedding) and its `sylk/status` answer, turned into a short text and a tooltip.
 */

import { IndexStatus } from "./protocol";

export interface ProgressValue {
  kind: "begin" | "report" | "end";
  title?: string;
  message?: string;
  percentage?: number;
}

export interface ActiveProgress {
  title: string;
  message?: string;
  percentage?: number;
}

/** Follows the server's progress tokens from begin to end. */
export class ProgressTracker {
  private readonly active = new Map<string, ActiveProgress>();

  /** Returns true when a progress ended (time to ask the server for its new state). */
  handle(token: string | number, value: ProgressValue): boolean {
    const key = String(token);
    if (value.kind === "begin") {
      this.active.set(key, { title: value.title ?? "Sylk", message: value.message, percentage: value.percentage });
      return false;
    }
    if (value.kind === "report") {
      const entry = this.active.get(key);
      if (entry !== undefined) {
        if (value.message !== undefined) {
          entry.message = value.message;
        }
        if (value.percentage !== undefined) {
          entry.percentage = value.percentage;
        }
      }
      return false;
    }
    return this.active.delete(key);
  }

  /** The progress shown: the latest begun that has not ended. */
  current(): ActiveProgress | undefined {
    let last: ActiveProgress | undefined;
    for (const entry of this.active.values()) {
      last = entry;
    }
    return last;
  }

  clear(): void {
    this.active.clear();
  }
}

export interface StatusView {
  text: string;
  tooltip: string;
}

/** "Sylk: Indexing workspace" -> "indexing workspace". */
function activity(title: string): string {
  const rest = title.replace(/^Sylk:\s*/, "");
  return rest.charAt(0).toLowerCase() + rest.slice(1);
}

export function formatBytes(bytes: number): string {
  const units = ["B", "KiB", "MiB", "GiB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`;
}

/** The percentage of chunks embedded, or undefined when there are none. */
export function embeddedPercent(status: IndexStatus): number | undefined {
  if (!status.chunks) {
    return undefined;
  }
  return Math.floor((100 * (status.embedded ?? 0)) / status.chunks);
}

/** Lines describing the index, for tooltips and "Sylk: Show Index Status". */
export function describeStatus(status: IndexStatus): string[] {
  const lines: string[] = [];
  if (status.files === undefined) {
    lines.push(status.ready ? "The index is not open." : "Opening the index...");
    return lines;
  }
  lines.push(`${status.files} files, ${status.symbols ?? 0} symbols, ${status.chunks ?? 0} chunks`);
  if (status.semantic !== undefined) {
    if (status.semantic.ready) {
      lines.push(`Semantic: ${status.embedded ?? 0}/${status.chunks ?? 0} chunks embedded (${status.semantic.model ?? "model"})`);
    } else if (!status.semantic.message) {
      lines.push(`Semantic: not loaded yet; ${status.embedded ?? 0}/${status.chunks ?? 0} chunks embedded`);
    } else {
      lines.push(`Semantic: unavailable${status.semantic.message ? ` (${status.semantic.message})` : ""}; lexical search only`);
    }
  }
  if (status.watch?.active) {
    lines.push("Following changes on disk" + (status.watch.pendingChanges > 0 ? ` (${status.watch.pendingChanges} waiting)` : ""));
  } else if (status.watch?.error) {
    lines.push(`Not following changes on disk: ${status.watch.error}`);
  }
  if (status.languages && status.languages.length > 0) {
    lines.push("Languages: " + status.languages.map((l) => `${l.language} ${l.files}`).join(", "));
  }
  if (status.lastRun) {
    lines.push(`Last run: ${status.lastRun}`);
  }
  if (status.skipped && status.skipped.total > 0) {
    const reasons = status.skipped.byReason.map((r) => `${r.reason} ${r.count}`).join(", ");
    lines.push(`Skipped: ${status.skipped.total} file${status.skipped.total === 1 ? "" : "s"} (${reasons})`);
  }
  if (status.readOnly) {
    lines.push("Read-only: another Sylk process owns this index.");
  }
  if (status.indexDir) {
    lines.push(`Index: ${status.indexDir}${status.indexBytes !== undefined ? ` (${formatBytes(status.indexBytes)})` : ""}`);
  }
  return lines;
}

/** The status bar's mark of an untrusted workspace (VS Code's restricted mode). */
export const RESTRICTED = "(restricted)";

/** What an untrusted workspace means for Sylk, for the tooltip and "Sylk: Show Index Status". */
export const RESTRICTED_LINES: readonly string[] = [
  "Restricted mode: this workspace is not trusted.",
  "Sylk ignores its .sylk.toml and [tool.sylk] and does not run git (no commit history, no authors).",
  "sylk.serverPath, sylk.indexDir and the embedding model come from your user settings only.",
  "Trust the workspace (Workspaces: Manage Workspace Trust) to lift this; the server restarts.",
];

/**
 * What restricted mode means, or nothing when the workspace is trusted. `trusted`: VS
 * Code's workspace trust; the server's status may say untrusted too (the user's own
 * Sylk config or SYLK_TRUSTED), in its own words.
 */
export function restrictedLines(trusted: boolean, status: IndexStatus | undefined): string[] {
  if (!trusted) {
    return [...RESTRICTED_LINES];
  }
  if (status?.trusted === false) {
    return [`Restricted mode: ${status.trustMessage ?? "the workspace is not trusted"}.`];
  }
  return [];
}

/**
 * What the status bar item says. `error` (the server could not start) wins, then running
 * progress, then the index state; `status` undefined means not known yet. Untrusted
 * (`trusted` false, VS Code's workspace trust, or the server's status says so): every
 * text but the error's ends in "(restricted)" and the tooltip says what that means.
 */
export function statusBarView(
  progress: ActiveProgress | undefined,
  status: IndexStatus | undefined,
  error?: string,
  trusted = true,
): StatusView {
  const view = busyOrIdleView(progress, status, error);
  const restricted = restrictedLines(trusted, status);
  if (restricted.length === 0 || error !== undefined) {
    return view;
  }
  return { text: `${view.text} ${RESTRICTED}`, tooltip: [...restricted, "", view.tooltip].join("\n") };
}

function busyOrIdleView(progress: ActiveProgress | undefined, status: IndexStatus | undefined, error?: string): StatusView {
  if (error !== undefined) {
    return { text: "$(error) Sylk", tooltip: error };
  }
  if (progress !== undefined) {
    const pct = progress.percentage !== undefined ? ` ${Math.round(progress.percentage)}%` : "";
    const tooltip = [progress.title, progress.message].filter((s) => s).join(": ");
    return { text: `$(sync~spin) Sylk: ${activity(progress.title)}${pct}`, tooltip };
  }
  if (status === undefined) {
    return { text: "$(loading~spin) Sylk", tooltip: "Sylk: starting the server" };
  }
  const details = describeStatus(status);
  const tooltip = ["Sylk", ...details, "", "Click for the index status."].join("\n");
  if (status.files === undefined || (!status.ready && status.indexing)) {
    return { text: "$(sync~spin) Sylk", tooltip };
  }
  let text = `$(database) Sylk: ${status.files} files`;
  if (status.readOnly) {
    text += " (read-only)";
  }
  if (status.semantic !== undefined && !status.semantic.ready && status.semantic.message) {
    text += " · lexical only";
  } else {
    const pct = embeddedPercent(status);
    if (pct !== undefined && pct < 100) {
      text += ` · ${pct}% embedded`;
    }
  }
  return { text, tooltip };
}

/**
 * The skipped files for the output channel: each listed file with its reason, then how
 * many more of a reason the status left out (it names the first 20 of each).
 */
export function skippedLines(status: IndexStatus): string[] {
  const lines: string[] = [];
  for (const r of status.skipped?.byReason ?? []) {
    r.files.forEach((f) => lines.push(`  skipped ${f}: ${r.reason}`));
    if (r.count > r.files.length) {
      lines.push(`  ... and ${r.count - r.files.length} more ${r.reason} (\`sylk status --skipped\` lists every one)`);
    }
  }
  return lines;
}
