/**
 * The wire shapes of Sylk's custom requests (camelCase JSON), as the server sends them.
 * Plain types only: this module is shared by the extension and the unit tests.
 */

export const SEARCH_REQUEST = "sylk/search";
export const STATUS_REQUEST = "sylk/status";
export const DOCUMENT_TEXT_REQUEST = "sylk/documentText";
export const REINDEX_COMMAND = "sylk.reindex";
/** workspace/executeCommand: delete every folder's index and build it again. */
export const CLEAR_INDEX_COMMAND = "sylk.clearIndex";

/** The answer of CLEAR_INDEX_COMMAND: per folder, the index folder removed, or why not. */
export interface ClearIndexResult {
  cleared: { root: string; removed: string | null; error: string | null }[];
  indexing: boolean;
}

/** The titles of the server's work-done progress (see server/sylk/lsp/server.py). */
export const INDEXING_TITLE = "Sylk: Indexing workspace";
export const EMBEDDING_TITLE = "Sylk: Embedding";

/** The modes that rank chunks (the answer is a SearchResult). */
export type RankedMode = "hybrid" | "lexical" | "semantic";
/** The modes that find every matching line, as ripgrep does (the answer is a LineSearchResult). */
export type LineMode = "exact" | "regex";
export type SearchMode = RankedMode | LineMode;
export const SEARCH_MODES: readonly SearchMode[] = ["hybrid", "lexical", "semantic", "exact", "regex"];
export const LINE_MODES: readonly LineMode[] = ["exact", "regex"];

export function isLineMode(mode: string | undefined): mode is LineMode {
  return (LINE_MODES as readonly string[]).includes(mode ?? "");
}

/**
 * Modes exact and regex: true, false, or "smart" (the default: case-insensitive unless the
 * pattern holds an upper-case letter, as `rg -S`).
 */
export type CaseSensitivity = boolean | "smart";

/** The document types a search can be narrowed to (`filters.types`). */
export const DOCUMENT_TYPES: readonly string[] = ["source_code", "markdown", "config", "text"];

export interface Position {
  line: number;
  character: number;
}

export interface Range {
  start: Position;
  end: Position;
}

export interface SearchFilters {
  languages?: string[];
  types?: string[];
  paths?: string[];
  kinds?: string[];
  /** Packages, each with the packages below it (`asyncio` holds `asyncio.tasks`). */
  packages?: string[];
  minLines?: number;
  maxLines?: number;
  roles?: string[];
  tags?: string[];
  authors?: string[];
  modifiedAfter?: string | number;
  modifiedBefore?: string | number;
  /** true: only chunks holding an exported definition; false: only the others; null: either. */
  exported?: boolean | null;
  /** Leave out what matches any of these (inline: `-path:vendor/**`, `-role:test`). */
  exclude?: SearchExclusions;
}

/** What a search leaves out (`filters.exclude`): the filters of values. */
export type SearchExclusions = Pick<
  SearchFilters,
  "languages" | "types" | "paths" | "kinds" | "packages" | "roles" | "tags" | "authors"
>;

/**
 * `sylk/search` params. In the modes exact and regex `query` is the literal or the Python
 * regular expression, taken as written; the filters that apply there are languages, types,
 * paths and kinds, and `caseSensitive` and `wholeWord` apply only there.
 */
export interface SearchParams {
  query: string;
  mode?: SearchMode;
  limit?: number;
  offset?: number;
  caseSensitive?: CaseSensitivity;
  wholeWord?: boolean;
  filters?: SearchFilters;
  weights?: { lexical?: number; semantic?: number };
  fuzzy?: boolean;
  facets?: boolean;
  contextLines?: number;
  expand?: boolean;
  groupBy?: "file" | "language" | "folder" | "kind" | "package" | "author";
  relatedFiles?: boolean;
  followUps?: boolean;
  summary?: boolean;
  explain?: boolean;
  /** The relevance floor: hits only the semantic side found below this cosine similarity are left out (0 or null: none). */
  minScore?: number | null;
}

/**
 * The URI scheme of what has no file: `sylk://document/<id>` (a virtual document) and
 * `sylk://commit/<sha>` (a commit); `sylk/documentText` returns its text.
 */
export const SYLK_SCHEME = "sylk";

export interface SearchHit {
  /** Always set: a `file:` URI, or a `sylk:` URI (see SYLK_SCHEME). */
  uri: string;
  /** The workspace path; `sylk:/<id>` for a virtual document; a commit's first file, or null. */
  path: string | null;
  /** null for a commit. */
  range: Range | null;
  language: string | null;
  type: string;
  kind: string | null;
  symbol: string | null;
  containerName: string | null;
  /** The file's package (Go import path, Java/C# package, Python module, package.json name, Rust crate, else the folder). */
  package: string | null;
  /** The chunk holds an exported definition (Go capitalised, Python public, JS/TS export, Rust pub, Java/C# public). */
  exported: boolean;
  score: number;
  lexicalRank: number | null;
  semanticRank: number | null;
  snippet: string;
  /** null for a commit. */
  snippetRange: Range | null;
  highlights: Range[];
  /** Where the hit sits: definition, test, docs, config, ... (from names and paths). */
  roles: string[];
  /** The last commit's author and time (seconds since the epoch) of the file, when it is in git. */
  author: string | null;
  modified: number | null;
  /** The user's tags of the file or document. */
  tags?: string[];
  /** `explain: true`: each side's rank and raw score, and the fused score. */
  explain?: HitExplain;
  /** The file changed since it was indexed and the chunk is not in it any more: the range is the indexed one. */
  stale: boolean;
  /** A virtual document's hit. */
  document?: { id: string; type?: string; title?: string; tags?: string[]; metadata?: Record<string, unknown> };
  /** A commit's hit (`type` "git_commit"). */
  commit?: { sha: string; files: string[] };
}

/** `sylk/documentText`: the text behind a `sylk:` URI. */
export interface DocumentTextParams {
  uri: string;
}

export interface DocumentText {
  uri: string;
  text: string;
  languageId?: string;
  title?: string;
}

export interface FacetValue {
  value: string;
  count: number;
}

export interface IndexState {
  files: number;
  chunks: number;
  embedded: number;
  pending: number;
  ready: boolean;
  /** An index run is under way. */
  indexing: boolean;
  /** Files of that run whose text is not searchable yet. */
  filesPending: number;
  /** chunks not embedded yet that the quick pass's static model covers */
  quick: number;
}

export interface HitExplain {
  lexicalRank: number | null;
  lexicalScore: number | null;
  semanticRank: number | null;
  semanticScore: number | null;
  fusedScore: number;
}

/** `explain: true`: how the query was read and fused. */
export interface QueryExplain {
  style: "identifier" | "natural" | "mixed";
  identifiers: string[];
  words: string[];
  dropped: string[];
  fusion: "convex" | "rrf" | "lexical" | "semantic";
  alpha: number | null;
  depth: number;
  /** The relevance floor applied (null: none), and the semantic-only hits left out below it. */
  minScore: number | null;
  belowMinScore: number;
  /** The stages of the ranking stack that ran, in order (`search.rankingOff` skips some). */
  ranking: Array<"members" | "definition" | "path" | "code" | "coherence" | "spread">;
}

export interface RelatedFile {
  path: string | null;
  module: string;
  importedBy: string[];
  uri?: string;
}

/** The answer in the modes hybrid, lexical and semantic: ranked chunks. */
export interface SearchResult {
  query: string;
  mode: RankedMode;
  tookMs: number;
  totalHits: number;
  hits: SearchHit[];
  facets: Record<string, FacetValue[]>;
  index: IndexState;
  message?: string;
  explain?: QueryExplain;
  relatedFiles?: RelatedFile[];
  expandedTerms?: string[];
  /** `groupBy`: indexes into `hits`. */
  groups?: { value: string | null; count: number; hits: number[] }[];
  followUps?: { query: string; options: string; reason: string }[];
  summary?: {
    totalHits: number;
    returned: number;
    files: number;
    topFiles: { path: string | null; hits: number }[];
    languages: Record<string, number>;
    kinds: Record<string, number>;
  };
}

/** One line an exact or regex search matched; lines 0-based, columns UTF-16. */
export interface LineHit {
  uri: string;
  path: string;
  language: string;
  type: string;
  line: number;
  /** The first match; an empty range at column 0 when the line only has empty matches. */
  range: Range;
  /** Every non-empty match on the line, in order. */
  matches: Range[];
  /** The whole line, without its line break. */
  text: string;
  /** The innermost symbol holding the line; "" when none. */
  symbol: string;
  containerName: string;
  /** That symbol's kind; null when none. */
  kind: string | null;
}

/** The answer in the modes exact and regex: one page of the matching lines. */
export interface LineSearchResult {
  query: string;
  mode: LineMode;
  tookMs: number;
  /** Matching lines (a lower bound when `totalHitsLowerBound`). */
  totalHits: number;
  /** The search stopped early: `totalHits` is only a lower bound. */
  totalHitsLowerBound: boolean;
  /** The pattern had no literal the trigram index could use: every indexed file was read. */
  scanned: boolean;
  /** A time limit stopped the search: the page may lack lines. */
  partial: boolean;
  filesSearched: number;
  hits: LineHit[];
  index: IndexState;
  message?: string;
}

/** What `sylk/search` answers: ranked chunks, or matching lines (modes exact and regex). */
export type AnySearchResult = SearchResult | LineSearchResult;

export function isLineResult(result: AnySearchResult): result is LineSearchResult {
  return isLineMode(result.mode);
}

/** The files the index left out for one reason (binary, too-large, ...), in path order. */
export interface SkippedReason {
  reason: string;
  count: number;
  /** The first 20 of them, or every one when `skipped: "all"` was asked. */
  files: string[];
}

/** `sylk/status`'s skipped files: the total, and per reason (most files first) a count and examples. */
export interface SkippedFiles {
  total: number;
  /** Every skipped file is listed in `byReason[].files`. */
  complete: boolean;
  byReason: SkippedReason[];
}

/** `sylk/status` params: `skipped` "sample" (the default: 20 files of each reason) or "all". */
export interface StatusParams {
  skipped?: "sample" | "all";
}

/** `sylk/status`: the server's state plus the index's (only `ready`, `indexing`, `embedding` are always there). */
export interface IndexStatus {
  ready: boolean;
  indexing: boolean;
  embedding: boolean;
  root?: string;
  indexDir?: string;
  files?: number;
  symbols?: number;
  chunks?: number;
  embedded?: number;
  pending?: number;
  /** Chunks the embedding model failed on, even alone: left out of semantic search. */
  embedFailures?: number;
  /** Chunks not embedded yet that have a vector of the quick pass's static model. */
  quick?: number;
  languages?: { language: string; files: number; symbols: number }[];
  indexBytes?: number;
  lastIndexed?: number | null;
  skipped?: SkippedFiles;
  readOnly?: boolean;
  merkleRoot?: string;
  semantic?: { ready: boolean; state: string; model: string | null; message: string | null };
  watch?: { active: boolean; error: string | null; pendingChanges: number; changesApplied: number };
  lastRun?: string;
  /** false: the workspace is not trusted (initializationOptions `trusted: false`, or the user's own config): its .sylk.toml and [tool.sylk] are ignored and git is not run. */
  trusted?: boolean;
  /** When `trusted` is false, what that means, in the server's words. */
  trustMessage?: string;
  /** Every workspace folder's own status (the fields above are the first folder's); always sent. */
  folders?: Omit<IndexStatus, "folders">[];
}

/**
 * Every field of each answer, for test/protocol.test.ts, which compares them with the
 * server's schema (server/sylk/lsp/protocol.schema.json). TypeScript makes each list
 * name every field of its interface and nothing else.
 */
type AllFields<T> = { readonly [K in keyof Required<T>]: true };

export const SEARCH_HIT_FIELDS: AllFields<SearchHit> = {
  uri: true, path: true, range: true, language: true, type: true, kind: true, symbol: true, containerName: true,
  package: true, score: true, lexicalRank: true, semanticRank: true, snippet: true, snippetRange: true, highlights: true,
  roles: true, author: true, modified: true, tags: true, explain: true, stale: true, document: true, commit: true,
  exported: true,
};

export const SEARCH_RESULT_FIELDS: AllFields<SearchResult> = {
  query: true, mode: true, tookMs: true, totalHits: true, hits: true, facets: true, index: true, message: true,
  explain: true, relatedFiles: true, expandedTerms: true, groups: true, followUps: true, summary: true,
};

export const LINE_HIT_FIELDS: AllFields<LineHit> = {
  uri: true, path: true, language: true, type: true, line: true, range: true, matches: true, text: true,
  symbol: true, containerName: true, kind: true,
};

export const LINE_SEARCH_RESULT_FIELDS: AllFields<LineSearchResult> = {
  query: true, mode: true, tookMs: true, totalHits: true, totalHitsLowerBound: true, scanned: true, partial: true,
  filesSearched: true, hits: true, index: true, message: true,
};

export const SEARCH_PARAMS_FIELDS: AllFields<SearchParams> = {
  query: true, mode: true, limit: true, offset: true, caseSensitive: true, wholeWord: true, filters: true,
  weights: true, fuzzy: true, facets: true, contextLines: true, expand: true, groupBy: true, relatedFiles: true,
  followUps: true, summary: true, explain: true, minScore: true,
};

export const SEARCH_FILTERS_FIELDS: AllFields<SearchFilters> = {
  languages: true, types: true, paths: true, kinds: true, packages: true, minLines: true, maxLines: true, roles: true, tags: true,
  authors: true, modifiedAfter: true, modifiedBefore: true, exported: true, exclude: true,
};

export const INDEX_STATUS_FIELDS: AllFields<IndexStatus> = {
  ready: true, indexing: true, embedding: true, root: true, indexDir: true, files: true, symbols: true,
  chunks: true, embedded: true, pending: true, embedFailures: true, quick: true, languages: true, indexBytes: true,
  lastIndexed: true, skipped: true, readOnly: true, merkleRoot: true, semantic: true, watch: true, lastRun: true,
  trusted: true, trustMessage: true, folders: true,
};
