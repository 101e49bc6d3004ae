"""MkDocs hook: drop a docs block's ``file=PATH`` from its fence for the site.

The pages mark the files of a scenario with ```` ```python file=PATH ````
(``tests/test_doc_examples.py`` writes each such block to ``PATH`` and runs the
page), and name the file in the line just before the block, which both the
site and GitHub's renderer show (the harness checks that they agree).  The
Markdown extension that renders fences accepts only the options it knows, so
this hook removes ``file=PATH`` before a page is rendered; the page source is
unchanged.
"""

from __future__ import annotations

import re
from typing import Any

_FILE_FENCE = re.compile(
    r"^(?P<head>[ \t]*(?:`{3,}|~{3,})[\w+-]+)(?P<opts>[^\n]*?)\s*\bfile=(?P<path>\S+)", re.M
)


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    return _FILE_FENCE.sub(lambda m: f"{m['head']}{m['opts']}", markdown)
