"""MkDocs hook: show a docs block's ``file=PATH`` as the title of the code block.

The pages mark the files of a scenario with ```` ```python file=PATH ````
(``tests/test_doc_examples.py`` writes each such block to ``PATH`` and runs the
page).  The Markdown extension that renders fences accepts only the options it
knows, so this hook turns ``file=PATH`` into ``title="PATH"`` before a page is
rendered: the site shows the path above the block, the page source is unchanged.
"""

from __future__ import annotations

import re
from typing import Any

_FILE_FENCE = re.compile(
    r"^(?P<head>[ \t]*(?:`{3,}|~{3,})[\w+-]+)(?P<opts>[^\n]*?)\bfile=(?P<path>\S+)", re.M
)


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    return _FILE_FENCE.sub(lambda m: f'{m["head"]}{m["opts"]} title="{m["path"]}"', markdown)
