/** What the unit tests share: ranges, and a hit shaped like the server's. */
import { SearchHit } from "../src/protocol";

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
