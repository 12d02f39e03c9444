/**
 * Hits that have no file: virtual documents (`sylk://document/<id>`) and commits
 * (`sylk://commit/<sha>`). Where an editor opens a hit, and the text a `sylk:` URI
 * shows, asked of the server with `sylk/documentText`. No VS Code here: extension.ts
 * wraps `SylkDocuments` in a TextDocumentContentProvider.
 */

import { DocumentText, DocumentTextParams, LineHit, Range, SearchHit, SYLK_SCHEME } from "./protocol";

/** The URI is one the Sylk server serves (`sylk:`), not a file. */
export function isSylkUri(uri: string): boolean {
  return uri.toLowerCase().startsWith(`${SYLK_SCHEME}:`);
}

/** Where to open a hit: its URI, the range to select, and the range to bring into view. */
export interface HitTarget {
  uri: string;
  virtual: boolean;
  selection: Range;
  reveal: Range;
}

const TOP: Range = { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } };

/** The first highlight when there is one, else the start of the hit; the top of the text for a hit without a range (a commit). */
export function hitTarget(hit: Pick<SearchHit, "uri" | "range" | "highlights">): HitTarget {
  const start = hit.range === null ? TOP : { start: hit.range.start, end: hit.range.start };
  const selection = hit.highlights.length > 0 ? hit.highlights[0] : start;
  const reveal = hit.range === null ? selection : { start: hit.range.start, end: selection.end };
  return { uri: hit.uri, virtual: isSylkUri(hit.uri), selection, reveal };
}

/** A matching line (modes exact and regex) opens at its first match, its line brought into view. */
export function lineTarget(hit: Pick<LineHit, "uri" | "range">): HitTarget {
  return { uri: hit.uri, virtual: isSylkUri(hit.uri), selection: hit.range, reveal: hit.range };
}

/** The text of `sylk:` URIs, from the server; remembers each one's language. */
export class SylkDocuments {
  private readonly answers = new Map<string, DocumentText>();

  constructor(private readonly request: (params: DocumentTextParams) => Promise<DocumentText>) {}

  /** The text to show for `uri` (as VS Code writes it); throws an Error naming the URI when the server cannot say. */
  async text(uri: string): Promise<string> {
    let answer: DocumentText;
    try {
      answer = await this.request({ uri });
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      throw new Error(`Sylk cannot open ${uri}: ${why}`);
    }
    if (typeof answer?.text !== "string") {
      throw new Error(`Sylk cannot open ${uri}: the server sent no text`);
    }
    this.answers.set(uri, answer);
    return answer.text;
  }

  /** The language the server gave the text of `uri` (after `text`), if any. */
  languageOf(uri: string): string | undefined {
    return this.answers.get(uri)?.languageId ?? undefined;
  }

  /** Forget `uri` (its editor was closed). */
  forget(uri: string): void {
    this.answers.delete(uri);
  }
}

/** The extension's command that opens a `sylk:` URI at a line (0-based): `[uri, line]`. */
export const OPEN_URI_COMMAND = "sylk.openUri";

/**
 * Hover Markdown with its `sylk:` links (`[path:3](sylk://document/id#L3)`, hover's related
 * code) made command links: VS Code keeps only the link schemes it knows (http, https,
 * file, ...) in a hover and shows the rest as plain text. Other links stay as they are.
 */
export function commandLinks(markdown: string): string {
  return markdown.replace(/\]\((sylk:[^)\s#]+)(?:#L(\d+))?\)/g, (_link, uri: string, line: string | undefined) => {
    const args = [uri, line === undefined ? 0 : Math.max(0, Number(line) - 1)];
    return `](command:${OPEN_URI_COMMAND}?${encodeURIComponent(JSON.stringify(args))})`;
  });
}
