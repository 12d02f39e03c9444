"""What kind of file a workspace file is, for chunking and the ``types`` filter:
``source_code``, ``markdown``, ``config`` or ``text``, from its language and its name."""

from __future__ import annotations

from .config_files import config_syntax

SOURCE_CODE, MARKDOWN, CONFIG, TEXT = "source_code", "markdown", "config", "text"

_MARKDOWN_EXTS = frozenset({".md", ".markdown", ".mdx"})
_SOURCE_EXTS = frozenset({
    ".sh", ".bash", ".zsh", ".fish", ".ps1", ".bat", ".cmd", ".lua", ".php", ".pl", ".pm", ".swift",
    ".kt", ".kts", ".scala", ".sc", ".r", ".m", ".mm", ".sql", ".dart", ".ex", ".exs", ".erl", ".hs",
    ".ml", ".mli", ".fs", ".fsx", ".clj", ".cljs", ".el", ".lisp", ".scm", ".vim", ".zig", ".nim",
    ".jl", ".groovy", ".gradle", ".vue", ".svelte", ".html", ".htm", ".css", ".scss", ".sass",
    ".less", ".proto", ".thrift", ".graphql", ".gql", ".tf", ".hcl", ".cmake", ".mk", ".asm", ".s",
    ".f90", ".f", ".pas", ".d", ".v", ".sv", ".vhd", ".cu", ".pyx", ".pxd",
})
_SOURCE_NAMES = frozenset({"Makefile", "GNUmakefile", "Dockerfile", "Containerfile", "CMakeLists.txt",
                           "Justfile", "Vagrantfile", "BUILD", "WORKSPACE", "Jenkinsfile"})


def file_type(path: str, language: str | None) -> str:
    """``source_code``, ``markdown``, ``config`` or ``text``, from the language and the file name."""
    name, ext = name_and_suffix(path)
    if language == "markdown" or ext in _MARKDOWN_EXTS:
        return MARKDOWN
    if language is not None:
        return SOURCE_CODE
    if config_syntax(name, ext) is not None:
        return CONFIG
    if ext in _SOURCE_EXTS or name in _SOURCE_NAMES:
        return SOURCE_CODE
    return TEXT


def name_and_suffix(path: str) -> tuple[str, str]:
    """The file name of a workspace-relative posix path and its suffix lower-cased, as
    ``PurePosixPath`` tells them (``.bashrc`` has none), without building one per file."""
    name = path.rstrip("/").rpartition("/")[2]
    dot = name.rfind(".")
    return name, name[dot:].lower() if 0 < dot < len(name) - 1 else ""
