/**
 * "Sylk: Semantic Search" without VS Code: request params from the picker's state, and
 * search hits as QuickPick items (label, description, detail). The items are plain
 * objects that fit `vscode.QuickPickItem`.
 */

import {
  DOCUMENT_TYPES,
  FacetValue,
  IndexStatus,
  SEARCH_MODES,
  SearchFilters,
  SearchHit,
  SearchMode,
  SearchParams,
  SearchResult,
} from "./protocol";

/** What the user picked besides the query text. */
export interface SearchState {
  mode: SearchMode;
  filters: SearchFilters;
}

export interface HitItem {
  role: "hit";
  label: string;
  description: string;
  detail: string;
  alwaysShow: true;
  hit: SearchHit;
}

export interface MoreItem {
  role: "more";
  label: string;
  description: string;
  alwaysShow: true;
  offset: number;
}

export interface MessageItem {
  role: "message";
  label: string;
  detail?: string;
  alwaysShow: true;
}

export type SearchItem = HitItem | MoreItem | MessageItem;

/** The filter lists that are set, and nothing else (the server rejects unknown keys). */
function cleanFilters(filters: SearchFilters): SearchFilters | undefined {
  const out: SearchFilters = {};
  for (const key of ["languages", "types", "paths", "kinds"] as const) {
    const values = filters[key];
    if (values !== undefined && values.length > 0) {
      out[key] = [...values];
    }
  }
  if (filters.minLines !== undefined) {
    out.minLines = filters.minLines;
  }
  if (filters.maxLines !== undefined) {
    out.maxLines = filters.maxLines;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** `sylk/search` params for a query typed in the picker; facets feed the filter choices. */
export function buildParams(query: string, state: SearchState, offset = 0, limit?: number): SearchParams {
  const params: SearchParams = { query: query.trim(), mode: state.mode, facets: true, contextLines: 2 };
  if (offset > 0) {
    params.offset = offset;
  }
  if (limit !== undefined) {
    params.limit = limit;
  }
  const filters = cleanFilters(state.filters);
  if (filters !== undefined) {
    params.filters = filters;
  }
  return params;
}

const KIND_ICONS: Record<string, string> = {
  class: "symbol-class",
  struct: "symbol-struct",
  interface: "symbol-interface",
  trait: "symbol-interface",
  enum: "symbol-enum",
  enum_member: "symbol-enum-member",
  union: "symbol-struct",
  type: "symbol-class",
  module: "symbol-namespace",
  namespace: "symbol-namespace",
  function: "symbol-function",
  method: "symbol-method",
  constructor: "symbol-constructor",
  constant: "symbol-constant",
  variable: "symbol-variable",
  field: "symbol-field",
  property: "symbol-property",
  macro: "symbol-misc",
  section: "symbol-string",
  heading: "symbol-string",
  key: "symbol-key",
  commit: "git-commit",
};

const TYPE_ICONS: Record<string, string> = {
  markdown: "markdown",
  config: "settings-gear",
  text: "file-text",
  source_code: "file-code",
};

export function iconFor(hit: Pick<SearchHit, "kind" | "type">): string {
  if (hit.kind !== null && KIND_ICONS[hit.kind] !== undefined) {
    return KIND_ICONS[hit.kind];
  }
  return TYPE_ICONS[hit.type] ?? "file";
}

/** The one line of the snippet worth showing: the first highlighted line, else the first non-blank one. */
export function snippetLine(hit: Pick<SearchHit, "snippet" | "snippetRange" | "highlights">, maxLength = 160): string {
  const lines = hit.snippet.split("\n");
  let line: string | undefined;
  const first = hit.snippetRange?.start.line ?? 0;
  for (const h of hit.highlights) {
    const index = h.start.line - first;
    if (index >= 0 && index < lines.length && lines[index].trim() !== "") {
      line = lines[index];
      break;
    }
  }
  if (line === undefined) {
    line = lines.find((l) => l.trim() !== "") ?? "";
  }
  const compact = line.trim().replace(/\s+/g, " ");
  return compact.length > maxLength ? compact.slice(0, maxLength - 1) + "…" : compact;
}

function baseName(p: string): string {
  const parts = p.split("/");
  return parts[parts.length - 1];
}

/** `path:line`, 1-based, as people write locations; a commit: `commit <sha>`. */
export function location(hit: Pick<SearchHit, "path" | "range" | "uri" | "commit">): string {
  if (hit.range === null) {
    return hit.commit !== undefined ? `commit ${hit.commit.sha.slice(0, 12)}` : (hit.path ?? hit.uri);
  }
  return `${hit.path ?? hit.uri}:${hit.range.start.line + 1}`;
}

export function hitToItem(hit: SearchHit): HitItem {
  // a commit's containerName is its author, not a container
  const container = hit.type === "git_commit" ? null : hit.containerName;
  const name = hit.symbol ? (container ? `${container}.${hit.symbol}` : hit.symbol) : baseName(hit.path ?? hit.uri);
  return {
    role: "hit",
    label: `$(${iconFor(hit)}) ${name}`,
    // the file changed and the chunk is not in it any more: the line is where it was
    description: hit.stale ? `${location(hit)} · stale, changed since indexed` : location(hit),
    detail: snippetLine(hit),
    alwaysShow: true,
    hit,
  };
}

/** The items of a result page; `previous` are the items already shown (pages accumulate). */
export function resultItems(result: SearchResult, offset: number, previous: readonly SearchItem[] = []): SearchItem[] {
  const hits = previous.filter((i): i is HitItem => i.role === "hit");
  const items: SearchItem[] = [...hits, ...result.hits.map(hitToItem)];
  if (items.length === 0) {
    const detail = result.message ?? (result.index.files === 0 ? "The index is empty or still being built." : undefined);
    return [{ role: "message", label: `No results for "${result.query}"`, detail, alwaysShow: true }];
  }
  const shown = offset + result.hits.length;
  if (result.hits.length > 0 && shown < result.totalHits) {
    items.push({
      role: "more",
      label: "$(ellipsis) Show more results",
      description: `${shown} of ${result.totalHits}`,
      alwaysShow: true,
      offset: shown,
    });
  }
  return items;
}

export function describeFilters(filters: SearchFilters): string {
  const parts: string[] = [];
  const names: [keyof SearchFilters, string][] = [
    ["languages", "lang"],
    ["types", "type"],
    ["kinds", "kind"],
    ["paths", "path"],
  ];
  for (const [key, name] of names) {
    const values = filters[key];
    if (Array.isArray(values) && values.length > 0) {
      parts.push(`${name}:${values.join(",")}`);
    }
  }
  return parts.join(" ");
}

/** The picker's title: mode, filters, and how complete the answer is. */
export function pickerTitle(state: SearchState, result?: SearchResult): string {
  const parts = [`Sylk Search (${state.mode})`];
  const filters = describeFilters(state.filters);
  if (filters !== "") {
    parts.push(filters);
  }
  if (result !== undefined) {
    parts.push(`${result.totalHits} hit${result.totalHits === 1 ? "" : "s"} in ${Math.round(result.tookMs)} ms`);
    if (result.message) {
      parts.push(result.message);
    } else if (result.mode !== "lexical" && result.index.pending > 0 && result.index.chunks > 0) {
      const pct = Math.floor((100 * result.index.embedded) / result.index.chunks);
      parts.push(`semantic side ${pct}% embedded`);
    }
  }
  return parts.join(" · ");
}

export function nextMode(mode: SearchMode): SearchMode {
  return SEARCH_MODES[(SEARCH_MODES.indexOf(mode) + 1) % SEARCH_MODES.length];
}

export interface FilterChoice {
  label: string;
  description?: string;
  picked: boolean;
  group: "languages" | "types" | "kinds" | "paths";
  value: string;
}

const GROUP_FACET: Record<FilterChoice["group"], string> = {
  languages: "language",
  types: "type",
  kinds: "kind",
  paths: "folder",
};

/**
 * The choices of the filter picker: languages (from the index status and the last result's
 * facets), document types, and the kinds and folders of the last result; what is selected
 * now stays listed and picked.
 */
export function filterChoices(
  current: SearchFilters,
  facets: Record<string, FacetValue[]> = {},
  status?: IndexStatus,
): FilterChoice[] {
  const out: FilterChoice[] = [];
  const groups: FilterChoice["group"][] = ["languages", "types", "kinds", "paths"];
  for (const group of groups) {
    const counts = new Map<string, number | undefined>();
    if (group === "types") {
      DOCUMENT_TYPES.forEach((t) => counts.set(t, undefined));
    }
    if (group === "languages") {
      for (const l of status?.languages ?? []) {
        if (l.language !== "text") {
          counts.set(l.language, undefined);
        }
      }
    }
    for (const f of facets[GROUP_FACET[group]] ?? []) {
      const value = group === "paths" ? folderGlob(f.value) : f.value;
      if (value !== "" && !(group === "languages" && value === "text")) {
        counts.set(value, f.count);
      }
    }
    const picked = new Set(current[group] ?? []);
    picked.forEach((v) => {
      if (!counts.has(v)) {
        counts.set(v, undefined);
      }
    });
    for (const [value, count] of counts) {
      out.push({
        label: value,
        description: count === undefined ? undefined : `${count} in the last results`,
        picked: picked.has(value),
        group,
        value,
      });
    }
  }
  return out;
}

function folderGlob(folder: string): string {
  if (folder === "" || folder === ".") {
    return "";
  }
  return folder.endsWith("/**") ? folder : `${folder.replace(/\/$/, "")}/**`;
}

/** The filters chosen in the filter picker (line bounds are kept as they were). */
export function filtersFromChoices(chosen: readonly FilterChoice[], previous: SearchFilters = {}): SearchFilters {
  const out: SearchFilters = {};
  for (const c of chosen) {
    (out[c.group] ??= []).push(c.value);
  }
  if (previous.minLines !== undefined) {
    out.minLines = previous.minLines;
  }
  if (previous.maxLines !== undefined) {
    out.maxLines = previous.maxLines;
  }
  return out;
}
