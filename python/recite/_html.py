"""recite's HTML report inside a notebook: the very page the report writes, in a frame of its
own so its styles and scripts neither leak into the notebook nor take it over."""

from __future__ import annotations

import html


def framed(page: str, height: int = 640) -> str:
    """``page`` as the ``srcdoc`` of an iframe."""
    return (
        f'<iframe srcdoc="{html.escape(page, quote=True)}" '
        f'style="width:100%;height:{height}px;border:1px solid #ddd" '
        'sandbox="allow-scripts allow-popups"></iframe>'
    )
