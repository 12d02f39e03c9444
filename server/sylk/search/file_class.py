"""What a file is there for, told from its path alone: the code itself, or what
surrounds it (tests, examples, documentation, benchmarks, build and CI set-up, generated
or vendored code). The ranking stack (ranking.py) puts the rest behind the code for a
question in words, unless the question names what it wants (``test``, ``example`` ...).

Classes: ``code`` (everything else), ``test`` (roles.is_test_path), ``example``,
``docs``, ``bench``, ``build`` (CI and packaging set-up), ``generated`` (and vendored).
"""

from __future__ import annotations

import re

from .roles import is_test_path

CODE, TEST, EXAMPLE, DOCS, BENCH, BUILD, GENERATED = (
    "code", "test", "example", "docs", "bench", "build", "generated")
FILE_CLASSES = (CODE, TEST, EXAMPLE, DOCS, BENCH, BUILD, GENERATED)

_DIR = {
    EXAMPLE: r"examples?|samples?|demos?|playground|tutorials?|docs_src|cookbook",
    DOCS: r"docs?|documentation|man|website|\.agents|\.claude|\.cursor",
    BENCH: r"bench|benches|benchmarks?|perf",
    BUILD: r"\.github|\.gitlab|\.circleci|\.buildkite|\.ci|ci|\.devcontainer|scripts",
    GENERATED: r"vendor|third[_-]?party|node_modules|dist|generated|gen|__generated__",
}
_DIR_RE = {cls: re.compile(rf"(?:^|/)(?:{alts})/", re.IGNORECASE) for cls, alts in _DIR.items()}
_DOC_FILE = re.compile(
    r"\.(?:md|mdx|markdown|rst|txt|adoc|asciidoc|org|rdoc|textile|pod)$"
    r"|(?:^|/)(?:readme|changelog|changes|history|news|contributing|authors|license|copying|notice)[^/]*$",
    re.IGNORECASE)
_BUILD_FILE = re.compile(
    r"(?:^|/)(?:Makefile|CMakeLists\.txt|Dockerfile|Jenkinsfile|Rakefile|Gemfile|Gruntfile\.js|gulpfile\.js"
    r"|\.gitlab-ci\.yml|\.travis\.yml|appveyor\.yml|tox\.ini|noxfile\.py|setup\.cfg|.*\.lock"
    r"|package-lock\.json|yarn\.lock|pnpm-lock\.yaml)$")
_GENERATED_FILE = re.compile(r"\.min\.[cm]?js$|_pb2(?:_grpc)?\.pyi?$|\.pb(?:\.gw)?\.go$|\.generated\.\w+$|\.g\.dart$"
                             r"|_generated\.\w+$|\.designer\.cs$")
# checked in this order: a test under examples/ is a test; generated code in docs/ is generated
_ORDER = (GENERATED, TEST, BENCH, EXAMPLE, DOCS, BUILD)

# the words of a query that ask for each class (lower case, as text.query_terms leaves them)
ASKS = {
    TEST: frozenset({"test", "tests", "testing", "tested", "spec", "specs", "fixture", "fixtures", "mock", "mocks"}),
    EXAMPLE: frozenset({"example", "examples", "sample", "samples", "demo", "demos", "tutorial", "usage"}),
    DOCS: frozenset({"doc", "docs", "documentation", "documented", "readme", "changelog", "guide", "manual"}),
    BENCH: frozenset({"bench", "benchmark", "benchmarks", "benchmarking", "perf"}),
    BUILD: frozenset({"ci", "build", "builds", "workflow", "workflows", "pipeline", "makefile", "docker",
                      "dockerfile", "release", "publish", "script", "scripts"}),
    GENERATED: frozenset({"generated", "vendor", "vendored", "protobuf", "codegen"}),
}


def file_class(path: str) -> str:
    """The class of the file at ``path`` (relative, ``/``-separated)."""
    for cls in _ORDER:
        if cls == TEST:
            if is_test_path(path):
                return TEST
        elif _DIR_RE[cls].search(path):
            return cls
        elif cls == DOCS and _DOC_FILE.search(path):
            return DOCS
        elif cls == BUILD and _BUILD_FILE.search(path):
            return BUILD
        elif cls == GENERATED and _GENERATED_FILE.search(path):
            return GENERATED
    return CODE


def asked_classes(words: tuple[str, ...] | list[str]) -> frozenset[str]:
    """The classes the query's words ask for (``tests for the parser``: test)."""
    return frozenset(cls for cls, asks in ASKS.items() if any(w in asks for w in words))
