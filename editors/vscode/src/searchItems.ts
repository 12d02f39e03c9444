/**
 * "Sylk: Semantic Search" without VS Code: request params from the picker's state, and
 * search hits and matching lines as QuickPick items (label, description, detail). The
 * items are plain objects that fit `vscode.QuickPickItem`.
 */

import {
  AnySearchResult,
  CaseSensitivity,
  DOCUMENT_TYPES,
  FacetValue,
  IndexStatus,
  isLineMode,
  isLineResult,
  LineHit,
  LineSearchResult,
  SEARCH_MODES,
  SearchFilters,
  SearchHit,
  SearchMode,
  SearchParams,
} from "./protocol";

/** What the user picked besides the query text (remembered per workspace). */
export interface SearchState {
  mode: SearchMode;
  filters: SearchFilters;
  /** Modes exact and regex: match case (smart, sensitive, insensitive). */
  caseSensitive: CaseSensitivity;
  /** Modes exact and regex: whole words only. */
  wholeWord: boolean;
}

/** The picker's state from what was remembered (an older extension kept less), else the defaults. */
export function restoreState(saved: unknown, defaultMode: SearchMode): SearchState {
  const s = (typeof saved === "object" && saved !== null ? saved : {}) as Partial<Record<keyof SearchState, unknown>>;
  const mode = (SEARCH_MODES as readonly unknown[]).includes(s.mode) ? (s.mode as SearchMode) : defaultMode;
  const filters = typeof s.filters === "object" && s.filters !== null ? (s.filters as SearchFilters) : {};
  const caseSensitive = s.caseSensitive === true || s.caseSensitive === false ? s.caseSensitive : "smart";
  return { mode, filters, caseSensitive, wholeWord: s.wholeWord === true };
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

/** A matching line (modes exact and regex). */
export interface LineItem {
  role: "line";
  label: string;
  description: string;
  detail?: string;
  alwaysShow: true;
  hit: LineHit;
}

export type SearchItem = HitItem | LineItem | MoreItem | MessageItem;

/**
 * The filter lists that are set, and nothing else (the server rejects unknown keys); the
 * line modes take languages, types, paths, kinds and packages only.
 */
function cleanFilters(filters: SearchFilters, lines: boolean): SearchFilters | undefined {
  const out: SearchFilters = {};
  for (const key of ["languages", "types", "paths", "kinds", "packages"] as const) {
    const values = filters[key];
    if (values !== undefined && values.length > 0) {
      out[key] = [...values];
    }
  }
  if (filters.minLines !== undefined && !lines) {
    out.minLines = filters.minLines;
  }
  if (filters.maxLines !== undefined && !lines) {
    out.maxLines = filters.maxLines;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** Whether the text typed in the picker is worth a request (a literal may be spaces; a ranked query may not). */
export function isSearchable(query: string, mode: SearchMode): boolean {
  return isLineMode(mode) ? query !== "" : query.trim() !== "";
}

/**
 * `sylk/search` params for a query typed in the picker. Ranked modes: the query trimmed,
 * facets (they feed the filter choices) and context lines. Exact and regex: the pattern as
 * typed, match case and whole word.
 */
export function buildParams(query: string, state: SearchState, offset = 0, limit?: number): SearchParams {
  const lines = isLineMode(state.mode);
  const params: SearchParams = lines
    ? { query, mode: state.mode, caseSensitive: state.caseSensitive, wholeWord: state.wholeWord }
    : { query: query.trim(), mode: state.mode, facets: true, contextLines: 2 };
  if (offset > 0) {
    params.offset = offset;
  }
  if (limit !== undefined) {
    params.limit = limit;
  }
  const filters = cleanFilters(state.filters, lines);
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

/** Text shown as is: QuickPick labels and details would read `$(name)` as an icon. */
function literal(text: string): string {
  return text.replace(/\$\(/g, "\\$(");
}

/** `i`, or one less when `i` would split a surrogate pair (an emoji). */
function charBoundary(text: string, i: number): number {
  const code = text.charCodeAt(i);
  return i > 0 && code >= 0xdc00 && code <= 0xdfff ? i - 1 : i;
}

/**
 * A line as a label: trimmed, whitespace runs kept (they may be what was searched for); a
 * long line is cut so that its first match stays in view.
 */
export function lineLabel(hit: Pick<LineHit, "text" | "range">, maxLength = 160): string {
  const indent = hit.text.length - hit.text.trimStart().length;
  let text = hit.text.trim();
  // UTF-16 columns are JavaScript string indexes
  const start = hit.range.start.character - indent;
  const end = hit.range.end.character - indent;
  let head = "";
  if (end > maxLength - 1 && start > 20) {
    text = text.slice(charBoundary(text, start - 20));
    head = "…";
  }
  if (text.length > maxLength) {
    text = text.slice(0, charBoundary(text, maxLength - 1)) + "…";
  }
  return head + text;
}

/** A matching line: the line, `path:line` (1-based), and the symbol it is in when there is one. */
export function lineToItem(hit: LineHit): LineItem {
  const name = hit.symbol ? (hit.containerName ? `${hit.containerName}.${hit.symbol}` : hit.symbol) : "";
  const item: LineItem = {
    role: "line",
    label: literal(lineLabel(hit)),
    description: `${hit.path}:${hit.line + 1}`,
    alwaysShow: true,
    hit,
  };
  if (name !== "") {
    item.detail = `$(${iconFor({ kind: hit.kind, type: hit.type })}) ${literal(name)}`;
  }
  return item;
}

/** JSON-RPC's InvalidParams: the server refused the search (an invalid regular expression, a bad filter). */
const INVALID_PARAMS = -32602;

/** The item shown when the request failed: what the server said, and whether the query itself is wrong. */
export function errorItem(err: unknown): MessageItem {
  const message = err instanceof Error ? err.message : String(err);
  const code = typeof err === "object" && err !== null ? (err as { code?: unknown }).code : undefined;
  const label = code === INVALID_PARAMS ? "$(error) Invalid search" : "$(error) Search failed";
  return { role: "message", label, detail: literal(message), alwaysShow: true };
}

/** "12", or "at least 12" when the search stopped early. */
function lineCount(result: LineSearchResult): string {
  return result.totalHitsLowerBound ? `at least ${result.totalHits}` : `${result.totalHits}`;
}

/** The items of a result page; `previous` are the items already shown (pages accumulate). */
export function resultItems(result: AnySearchResult, offset: number, previous: readonly SearchItem[] = []): SearchItem[] {
  const kept = previous.filter((i): i is HitItem | LineItem => i.role === "hit" || i.role === "line");
  const lines = isLineResult(result);
  const items: SearchItem[] = [...kept, ...(lines ? result.hits.map(lineToItem) : result.hits.map(hitToItem))];
  if (items.length === 0) {
    const detail = result.message ?? (result.index.files === 0 ? "The index is empty or still being built." : undefined);
    const label = lines ? `No line matches "${result.query}"` : `No results for "${result.query}"`;
    return [{ role: "message", label: literal(label), detail, alwaysShow: true }];
  }
  const shown = offset + result.hits.length;
  // a lower bound: there may be more lines than counted
  const more = shown < result.totalHits || (lines && result.totalHitsLowerBound);
  if (result.hits.length > 0 && more) {
    items.push({
      role: "more",
      label: "$(ellipsis) Show more results",
      description: `${shown} of ${lines ? lineCount(result) : result.totalHits}`,
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

const CASE_NAMES: Record<string, string> = { smart: "smart case", true: "match case", false: "ignore case" };

/** The mode as the title says it: `regex, smart case, whole word` in the line modes. */
export function describeMode(state: SearchState): string {
  if (!isLineMode(state.mode)) {
    return state.mode;
  }
  const parts: string[] = [state.mode, CASE_NAMES[String(state.caseSensitive)]];
  if (state.wholeWord) {
    parts.push("whole word");
  }
  return parts.join(", ");
}

/** The picker's title: mode, filters, and how complete the answer is. */
export function pickerTitle(state: SearchState, result?: AnySearchResult): string {
  const parts = [`Sylk Search (${describeMode(state)})`];
  const filters = describeFilters(state.filters);
  if (filters !== "") {
    parts.push(filters);
  }
  if (result !== undefined && isLineResult(result)) {
    const n = result.totalHits;
    parts.push(`${lineCount(result)} matching line${n === 1 ? "" : "s"}${result.partial ? " (partial)" : ""}`);
    parts.push(`${result.filesSearched} file${result.filesSearched === 1 ? "" : "s"} searched in ${Math.round(result.tookMs)} ms`);
    // the server's message explains its flags; without one, the title does
    if (result.message) {
      parts.push(result.message);
    } else if (result.scanned) {
      parts.push("every file read: the pattern has no literal text to look up");
    }
  } else if (result !== undefined) {
    parts.push(`${result.totalHits} hit${result.totalHits === 1 ? "" : "s"} in ${Math.round(result.tookMs)} ms`);
    // the server's message says how much of the index the semantic side covered
    if (result.message) {
      parts.push(result.message);
    }
  }
  return parts.join(" · ");
}

export function nextMode(mode: SearchMode): SearchMode {
  return SEARCH_MODES[(SEARCH_MODES.indexOf(mode) + 1) % SEARCH_MODES.length];
}

/** The match case button: smart, then sensitive, then insensitive, then smart again. */
export function nextCase(value: CaseSensitivity): CaseSensitivity {
  return value === "smart" ? true : value === true ? false : "smart";
}

export interface FilterChoice {
  label: string;
  description?: string;
  picked: boolean;
  group: "languages" | "types" | "kinds" | "packages" | "paths";
  value: string;
}

const GROUP_FACET: Record<FilterChoice["group"], string> = {
  languages: "language",
  types: "type",
  kinds: "kind",
  packages: "package",
  paths: "folder",
};

/**
 * The choices of the filter picker: languages (from the index status and the last result's
 * facets), document types, and the kinds, packages and folders of the last result; what is selected
 * now stays listed and picked.
 */
export function filterChoices(
  current: SearchFilters,
  facets: Record<string, FacetValue[]> = {},
  status?: IndexStatus,
): FilterChoice[] {
  const out: FilterChoice[] = [];
  const groups: FilterChoice["group"][] = ["languages", "types", "kinds", "packages", "paths"];
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
