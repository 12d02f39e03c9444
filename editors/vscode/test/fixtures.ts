/** What the unit tests share: ranges, and a hit and a matching line shaped like the server's. */
import { LineHit, SearchHit } from "../src/protocol";

export function range(a: number, b: number, c = 0, d = 0) {
  return { start: { line: a, character: c }, end: { line: b, character: d } };
}

// Shaped like the server's answer for "retry policy" on fixtures/workspace.
export const should: SearchHit = {
  uri: "file:///ws/app/http.py",
  path: "app/http.py",
  range: range(20, 22),
  language: "python",
  type: "source_code",
  kind: "method",
  symbol: "should_retry",
  containerName: "HttpRetryPolicy",
  package: "app.http",
  exported: true,
  score: 0.016,
  lexicalRank: 2,
  semanticRank: null,
  snippet: "    def should_retry(self, attempt: int, status: int) -> bool:\n        return attempt < self.max_attempts and status in self.retryable_statuses",
  snippetRange: range(20, 22),
  highlights: [range(21, 21, 50, 55)],
  roles: ["definition"],
  author: null,
  modified: null,
  stale: false,
};

// Shaped like the server's answer for the regex `[A-Z]+_[A-Z_]+ = ` on fixtures/workspace:
// app/unicode.py line 4, matches after an accented letter and emoji (UTF-16 columns).
const unicodeLine = 'FAREWELL = "adiós 👋👋"; ZWJ_FAMILY = "👨‍👩‍👧"; LAST_ON_LINE = 3';

function utf16Range(line: number, text: string, needle: string, from = 0) {
  const start = text.indexOf(needle, from); // JavaScript indexes are UTF-16 code units
  return range(line, line, start, start + needle.length);
}

export const farewell: LineHit = {
  uri: "file:///ws/app/unicode.py",
  path: "app/unicode.py",
  language: "python",
  type: "source_code",
  line: 3,
  range: utf16Range(3, unicodeLine, "ZWJ_FAMILY = "),
  matches: [utf16Range(3, unicodeLine, "ZWJ_FAMILY = "), utf16Range(3, unicodeLine, "LAST_ON_LINE = ")],
  text: unicodeLine,
  symbol: "",
  containerName: "",
  kind: null,
};

// `should_retry(` (exact) inside a function of fixtures/workspace's app/http.py.
const shouldLine = "        if not policy.should_retry(attempt, response.status_code):";

export const shouldCall: LineHit = {
  uri: "file:///ws/app/http.py",
  path: "app/http.py",
  language: "python",
  type: "source_code",
  line: 33,
  range: utf16Range(33, shouldLine, "should_retry("),
  matches: [utf16Range(33, shouldLine, "should_retry(")],
  text: shouldLine,
  symbol: "fetch_with_retries",
  containerName: "",
  kind: "function",
};
