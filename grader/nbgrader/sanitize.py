"""Student HTML, made safe for the browsers that show graded notebooks.

A submission's markdown cells, raw cells and outputs (``display(HTML(...))``, text/html, SVG,
JavaScript) are written by the student. nbgrader puts them as they are into the feedback HTML
(``nbgrader generate_feedback``) and into the formgrader's page, which runs in the instructor's
logged-in Jupyter server. Everything here is wired in by :func:`safe_html_config`, which the course's
``nbgrader_config.py`` merges (grader/nbgrader/course.py):

* :class:`SanitizeStudentHTML` (a preprocessor of every HTML export) cleans text/html outputs and raw
  cells, drops the output types a browser would run (JavaScript, SVG, widgets) and the output metadata
  and cell fields the templates put into attributes;
* :func:`markdown_to_safe_html` replaces the templates' ``markdown2html`` filter: markdown is turned
  into HTML as nbconvert does, then cleaned (raw HTML inside markdown only exists after rendering);
* :class:`FeedbackExporter` (the exporter of ``generate_feedback``) adds a Content-Security-Policy
  that lets no script run and nothing load from elsewhere, should anything slip through.

The cleaning is an allow-list (bleach): text formatting, headings, lists, tables, code, links to
http(s)/mailto/anchors and pictures in data:image/png|jpeg|gif|webp|svg+xml URLs (the course's kernel pictures
are SVG). An SVG shown through ``<img>`` is an image to the browser: it runs no script, handles no event and
loads nothing (tested in headless Chromium), unlike an ``<svg>`` element or an SVG document, which stay out.
Anything else is escaped and shows as text, so the grader sees what the student wrote.
"""

from __future__ import annotations

import re
from typing import Any

import bleach
from jinja2 import pass_context
from nbconvert.exporters import HTMLExporter
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath
from nbconvert.preprocessors import Preprocessor
from nbformat import NotebookNode
from traitlets.config import Config

ALLOWED_TAGS = frozenset(
    {
        *("a", "abbr", "b", "blockquote", "br", "caption", "code", "col", "colgroup", "dd", "del", "details"),
        *("div", "dl", "dt", "em", "figcaption", "figure", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i"),
        *("img", "ins", "kbd", "li", "mark", "ol", "p", "pre", "q", "s", "samp", "small", "span", "strong"),
        *("sub", "summary", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "u", "ul", "var"),
    }
)
HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})  # their id is the target of the anchor links
ATTRIBUTES_OF_ANY_TAG = frozenset({"class", "title"})
TAG_ATTRIBUTES = {
    "a": frozenset({"href", "name"}),
    "img": frozenset({"src", "alt", "width", "height"}),
    "td": frozenset({"colspan", "rowspan", "align"}),
    "th": frozenset({"colspan", "rowspan", "align", "scope"}),
    "ol": frozenset({"start"}),
}
URL_ATTRIBUTES = frozenset({"href", "src"})
NUMBER_ATTRIBUTES = frozenset({"width", "height", "colspan", "rowspan", "start"})
LINK_SCHEMES = frozenset({"http", "https", "mailto"})
# bleach checks every URL's scheme against this list as well; data: is narrowed to pictures below.
BLEACH_PROTOCOLS = frozenset({*LINK_SCHEMES, "data"})
PICTURE_URL = re.compile(r"data:image/(png|jpeg|gif|webp|svg\+xml);base64,[A-Za-z0-9+/=]*", re.IGNORECASE)
URL_SCHEME = re.compile(r"([a-zA-Z][a-zA-Z0-9+.\-]*):")
# Browsers ignore these in a URL ("java\tscript:" is javascript:).
URL_IGNORED = re.compile(r"[\x00-\x20]+")

# Output types whose template escapes them or only puts base64 into a data: URL.
SHOWN_AS_IS = frozenset({"text/plain", "text/latex", "image/png", "image/jpeg"})
CLEANED_HERE = frozenset({"text/html"})
CLEANED_BY_FILTER = frozenset({"text/markdown"})  # the template renders it with markdown2html
CELL_TAG = re.compile(r"[A-Za-z0-9_\-]+")  # tags become class names in the templates
STREAM_NAMES = frozenset({"stdout", "stderr"})

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
HEAD_TAG = re.compile(r"<head(\s[^>]*)?>", re.IGNORECASE)


# ----------------------------------------------------------------------------- the allow-list


def is_safe_url(value: str, *, picture: bool) -> bool:
    """A relative URL, an http(s)/mailto link, or (for a picture) a file beside the notebook or a raster or SVG
    image in a data: URL. A picture never loads from another host: the formgrader's pages have no policy, and an
    ``<img src="https://...">`` (or ``//host/...``) in a student's markdown would tell his server who looked."""
    url = URL_IGNORED.sub("", value)
    scheme = URL_SCHEME.match(url)
    if scheme is None:  # relative: an anchor or a file beside the notebook, unless it names a host
        return not (picture and url.replace("\\", "/").startswith("//"))
    if picture:
        return PICTURE_URL.fullmatch(url) is not None
    return scheme.group(1).lower() in LINK_SCHEMES


def is_allowed_attribute(tag: str, name: str, value: str) -> bool:
    """bleach's attribute filter: no event handler or style, URLs and numbers checked."""
    allowed = ATTRIBUTES_OF_ANY_TAG | TAG_ATTRIBUTES.get(tag, frozenset())
    if tag in HEADINGS:
        allowed = allowed | {"id"}
    if name not in allowed:
        return False
    if name in URL_ATTRIBUTES:
        return is_safe_url(value, picture=tag == "img")
    if name in NUMBER_ATTRIBUTES:
        return value.strip().isdigit()
    return True


CLEANER = bleach.sanitizer.Cleaner(
    tags=ALLOWED_TAGS,
    attributes=is_allowed_attribute,
    protocols=BLEACH_PROTOCOLS,
    strip=False,  # escape what is not allowed: the grader sees the attempt as text
    strip_comments=True,
)


def clean_fragment(html: str) -> str:
    """``html`` with only the allowed tags and attributes left as markup."""
    return CLEANER.clean(str(html))


# ---------------------------------------------------------------------------- nbconvert hooks


@pass_context
def markdown_to_safe_html(context: Any, source: str) -> str:
    """The templates' ``markdown2html``: nbconvert's rendering (attachments and math kept), cleaned."""
    cell = context.get("cell", {})
    renderer = IPythonRenderer(escape=False, attachments=cell.get("attachments", {}))
    return clean_fragment(MarkdownWithMath(renderer=renderer).render(source))


def safe_output(output: NotebookNode) -> NotebookNode:
    """One code cell output with nothing a browser would run."""
    if output.get("output_type") == "stream" and output.get("name") not in STREAM_NAMES:
        output["name"] = "stdout"
    if "data" not in output:
        return output
    kept = {}
    for mimetype, value in output["data"].items():
        if mimetype in SHOWN_AS_IS or mimetype in CLEANED_BY_FILTER:
            kept[mimetype] = value
        elif mimetype in CLEANED_HERE:
            kept[mimetype] = clean_fragment("".join(value) if isinstance(value, list) else value)
    output["data"] = kept
    # The templates put metadata into attributes (sizes, alt text, file names) or isolate HTML in an iframe.
    output["metadata"] = {}
    return output


def execution_count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class SanitizeStudentHTML(Preprocessor):
    """Cleans what a submission's cells put into an HTML export; markdown is left to the filter."""

    def preprocess_cell(self, cell, resources, index):
        tags = cell.get("metadata", {}).get("tags")
        if tags is not None:
            cell.metadata["tags"] = [tag for tag in tags if isinstance(tag, str) and CELL_TAG.fullmatch(tag)]
        if cell.cell_type == "raw":
            cell.source = clean_fragment(cell.source)
        elif cell.cell_type == "code":
            cell.execution_count = execution_count(cell.get("execution_count"))
            cell.outputs = [safe_output(output) for output in cell.get("outputs", [])]
        return cell, resources


def with_content_security_policy(html: str) -> str:
    """``html`` with a policy, first in its head, that lets no script run and nothing load."""
    meta = f'<meta http-equiv="Content-Security-Policy" content="{CONTENT_SECURITY_POLICY}">'
    head = HEAD_TAG.search(html)
    if head is None:
        return meta + html  # before any content the parser opens a head for it
    return html[: head.end()] + meta + html[head.end() :]


class FeedbackExporter(HTMLExporter):
    """The feedback page: nbgrader's template, and a policy that no script in it may run."""

    def from_notebook_node(self, nb, resources=None, **kw):
        html, resources = super().from_notebook_node(nb, resources, **kw)
        return with_content_security_policy(html), resources


def safe_html_config() -> Config:
    """The settings that make every HTML export of a submission safe (feedback and formgrader)."""
    c = Config()
    c.HTMLExporter.preprocessors = [f"{__name__}.SanitizeStudentHTML"]
    c.HTMLExporter.filters = {"markdown2html": f"{__name__}.markdown_to_safe_html"}
    c.HTMLExporter.sanitize_html = True  # nbconvert's own switch: no JavaScript or widget outputs
    c.GenerateFeedback.exporter_class = f"{__name__}.FeedbackExporter"
    return c
