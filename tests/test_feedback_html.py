"""The feedback HTML shows a student's markdown and outputs, never runs them (grader/nbgrader/sanitize.py).

The exporter is built as ``nbgrader generate_feedback`` builds it, from the course's own
nbgrader_config.py, so a setting missing there fails here. No browser is installed on CI: the page is
parsed instead, and every element, attribute and URL in it is checked.
"""

from __future__ import annotations

import base64
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from grader.nbgrader.sanitize import CONTENT_SECURITY_POLICY, clean_fragment, is_safe_url

# An SVG whose script and onload would set the title, were it a document: shown as a picture it runs neither.
SCRIPTED_SVG = base64.b64encode(
    b"<svg xmlns='http://www.w3.org/2000/svg' onload=\"top.document.title='pwned'\">"
    b"<script>top.document.title='pwned'</script><rect width='9' height='9'/></svg>"
).decode()

PAYLOADS = [
    "<script>document.title = 'pwned'</script>",
    f'<img src="data:image/svg+xml;base64,{SCRIPTED_SVG}">',
    "<img src=x onerror=\"document.title='pwned'\">",
    "<svg onload=\"document.title='pwned'\"></svg>",
    "<a href=\"javascript:document.title='pwned'\">click</a>",
    '<a href="java&#09;script:alert(1)">tab</a>',
    '<a href="data:text/html,<script>alert(1)</script>">data link</a>',
    '<iframe src="https://evil.example"></iframe>',
    '<object data="https://evil.example/x.swf"></object>',
    '<embed src="https://evil.example/x.swf">',
    '<form action="https://evil.example"><input name="q"></form>',
    '<base href="https://evil.example/">',
    '<meta http-equiv="refresh" content="0;url=https://evil.example">',
    "<style>@import url(https://evil.example/x.css);</style>",
    "<p style=\"background:url('https://evil.example/t.png')\">styled</p>",
]
FORBIDDEN_TAGS = {"script", "svg", "iframe", "object", "embed", "form", "input", "base", "link"}
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n not really a picture").decode()


class Elements(HTMLParser):
    """Every start tag of a page, with its attributes, and the text of its style and script elements."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.styles: list[str] = []
        self.scripts: list[str] = []
        self._open: str | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, {name: value or "" for name, value in attrs}))
        self._open = tag

    def handle_endtag(self, tag):
        self._open = None

    def handle_data(self, data):
        if self._open == "style":
            self.styles.append(data)
        elif self._open == "script":
            self.scripts.append(data)


def elements(html: str) -> Elements:
    parser = Elements()
    parser.feed(html)
    parser.close()
    return parser


def student_notebook() -> nbformat.NotebookNode:
    """A graded notebook: a heading, a kernel, its check cell with a score, and every payload."""
    check = new_code_cell('check("add")', execution_count=3)
    check.outputs = [new_output("stream", name="stdout", text="PASS add: 3 cases\n")]
    check.metadata["nbgrader"] = {
        **{"grade": True, "solution": False, "locked": True, "grade_id": "p02_add_check"},
        **{"points": 1, "score": 1.0, "schema_version": 3},
    }
    shown = new_code_cell("display(HTML(payload))", execution_count=4)
    html_output = "".join(PAYLOADS) + "<table><tr><td>cell table</td></tr></table>"
    shown.outputs = [
        new_output("display_data", data={"text/html": html_output, "text/plain": "<HTML object>"}),
        new_output("display_data", data={"application/javascript": "document.title = 'pwned'"}),
        new_output("display_data", data={"image/svg+xml": "<svg onload=\"document.title='pwned'\"/>"}),
        new_output(
            "display_data",
            data={"image/png": PNG, "text/plain": "<Figure>"},
            metadata={"image/png": {"width": "1 onerror=alert(1)"}},
        ),
        new_output(
            "display_data",
            data={"text/html": "<b>isolated</b>"},
            metadata={"text/html": {"isolated": True}},
        ),
    ]
    return new_notebook(
        cells=[
            new_markdown_cell("# Vector add\n\nAdd `a` and `b`, with **TileLang**."),
            new_code_cell("def add(a, b):\n    return a + b", execution_count=1),
            new_markdown_cell("Notes:\n\n" + "\n\n".join(PAYLOADS) + "\n\n[docs](https://tile-ai.github.io/)"),
            check,
            shown,
        ],
        metadata={"language_info": {"name": "python"}},
    )


@pytest.fixture(scope="module")
def feedback_html(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The page, exported as ``nbgrader generate_feedback`` does with the course's configuration."""
    from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
    from nbgrader.converters import GenerateFeedback
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import PyFileConfigLoader

    from grader.nbgrader.course import main as make_course

    course = tmp_path_factory.mktemp("feedback") / "course"
    assert make_course([str(course), "--puzzles", "02"]) == 0
    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    converter = GenerateFeedback(coursedir=CourseDirectory(config=config), config=config)
    exporter = converter.exporter_class(parent=converter, config=converter.config)
    # GetGrades reads the scores from the gradebook; here they are in the notebook and below.
    exporter.register_preprocessor(CSSHTMLHeaderPreprocessor)
    resources = {"nbgrader": {"notebook": "p02_vector_add", "score": 1.0, "max_score": 1.0, "late_penalty": 0.0}}
    html, _ = exporter.from_notebook_node(student_notebook(), resources=resources)
    (course / "feedback.html").write_text(html)  # for a look by hand: pytest --basetemp
    return html


def script_attributes(page: Elements) -> list[dict[str, str]]:
    """The attributes of every script element."""
    return [attributes for tag, attributes in page.tags if tag == "script"]


def is_template_script(attributes: dict[str, str]) -> bool:
    """The feedback template's own scripts: MathJax and its settings (the policy keeps both from running)."""
    mathjax = attributes.get("src", "").startswith("https://cdnjs.cloudflare.com/ajax/libs/mathjax/")
    return mathjax or attributes == {"type": "text/x-mathjax-config"}


def test_no_payload_survives_as_markup(feedback_html: str):
    page = elements(feedback_html)
    assert all(is_template_script(attributes) for attributes in script_attributes(page))
    assert not any("pwned" in script or "alert" in script for script in page.scripts)
    for tag, attributes in page.tags:
        assert tag == "script" or tag not in FORBIDDEN_TAGS, (tag, attributes)
        assert not (tag == "meta" and attributes.get("http-equiv", "").lower() == "refresh"), attributes
        for name, value in attributes.items():
            assert not name.startswith("on"), (tag, name, value)
            if name in ("href", "src", "action", "data", "formaction"):
                assert is_safe_url(value, picture=tag == "img"), (tag, name, value)
        if tag == "img" and "width" in attributes:
            assert attributes["width"].isdigit(), attributes
    assert not any("evil.example" in style for style in page.styles)  # only the template's own CSS
    assert "pwned" not in "".join(page.styles)


def test_the_payloads_show_as_text(feedback_html: str):
    """The grader sees what the student tried, escaped."""
    assert "&lt;script&gt;document.title = 'pwned'&lt;/script&gt;" in feedback_html
    assert "&lt;iframe" in feedback_html


def test_the_course_content_survives(feedback_html: str):
    page = elements(feedback_html)
    tags = [tag for tag, _ in page.tags]
    assert "h1" in tags and "table" in tags and "code" in tags
    assert "Vector add" in feedback_html and "<strong>TileLang</strong>" in feedback_html
    assert "PASS add: 3 cases" in feedback_html
    assert "Score: 1.0 / 1.0" in feedback_html
    assert "<b>isolated</b>" in feedback_html
    links = [attributes.get("href") for tag, attributes in page.tags if tag == "a"]
    assert "https://tile-ai.github.io/" in links
    pictures = [attributes.get("src", "") for tag, attributes in page.tags if tag == "img"]
    assert f"data:image/png;base64,{PNG}" in pictures


def test_the_page_forbids_every_script(feedback_html: str):
    page = elements(feedback_html)
    first = page.tags[:3]
    assert ("meta", {"http-equiv": "Content-Security-Policy", "content": CONTENT_SECURITY_POLICY}) in first
    assert "script-src" not in CONTENT_SECURITY_POLICY and "default-src 'none'" in CONTENT_SECURITY_POLICY


def test_the_formgrader_exporter_sanitizes_too(tmp_path: Path):
    """The formgrader renders submissions with a plain HTMLExporter built from the same config and its
    formgrade template; that page runs the formgrader's own scripts, none of the student's."""
    from nbconvert.exporters import HTMLExporter
    from nbgrader.server_extensions.formgrader import handlers
    from traitlets.config.loader import PyFileConfigLoader

    from grader.nbgrader.course import main as make_course

    assert make_course([str(tmp_path / "course"), "--puzzles", "02"]) == 0
    config = PyFileConfigLoader("nbgrader_config.py", path=str(tmp_path / "course")).load_config()
    config.HTMLExporter.template_name = "formgrade"  # as FormgradeExtension.build_extra_config sets it
    config.HTMLExporter.extra_template_basedirs = [handlers.template_path]
    resources = {  # what formgrader's SubmissionHandler passes
        **{"assignment_id": "ps1", "notebook_id": "p02_vector_add", "submission_id": "s1", "index": 0, "total": 1},
        **{"base_url": "", "student": "mallory", "last_name": "", "first_name": "", "notebook_path": "x.ipynb"},
    }
    html, _ = HTMLExporter(config=config).from_notebook_node(student_notebook(), resources=resources)
    page = elements(html)
    for tag, attributes in page.tags:  # its own forms, inputs, stylesheets and onclick handlers are there
        assert tag not in {"svg", "iframe", "object", "embed", "base"}, (tag, attributes)
        payload = ("pwned", "alert", "evil.example", "javascript:")
        assert not any(word in value for value in attributes.values() for word in payload), (tag, attributes)
    assert not any("pwned" in script or "alert" in script for script in page.scripts)
    assert "Vector add" in html and "&lt;script&gt;document.title" in html


@pytest.mark.parametrize(
    ("fragment", "kept"),
    [
        ('<a href="https://example.org">x</a>', '<a href="https://example.org">x</a>'),
        ('<a href="#top">x</a>', '<a href="#top">x</a>'),
        ('<a href=" JaVaScRiPt:alert(1)">x</a>', "<a>x</a>"),
        ('<img src="data:image/svg+xml;base64,PHN2Zz4=">', '<img src="data:image/svg+xml;base64,PHN2Zz4=">'),
        ('<img src="data:image/svg+xml,<svg onload=alert(1)>">', "<img>"),  # an SVG picture only as base64
        ('<a href="data:image/svg+xml;base64,PHN2Zz4=">open</a>', "<a>open</a>"),  # never as a document to open
        # a picture never loads from another host (the formgrader has no policy): it would tell who looked
        ('<img src="https://evil.example/t.png">', "<img>"),
        ('<img src="//evil.example/t.png">', "<img>"),
        ('<img src="\\\\evil.example/t.png">', "<img>"),
        ('<img src="figure.png">', '<img src="figure.png">'),
        (
            '<table><tr><td colspan="2">x</td></tr></table>',
            '<table><tbody><tr><td colspan="2">x</td></tr></tbody></table>',
        ),
    ],
)
def test_clean_fragment(fragment: str, kept: str):
    assert clean_fragment(fragment) == kept


def browser() -> str | None:
    import shutil

    return next(
        (found for name in ("chromium", "chromium-browser", "google-chrome") if (found := shutil.which(name))), None
    )


def rendered_title(page: Path) -> str:
    """The page's title after a headless Chromium loaded it and ran what it would (every payload sets it)."""
    import re
    import subprocess

    command = [browser(), "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=3000", "--dump-dom"]
    done = subprocess.run([*command, page.as_uri()], capture_output=True, text=True, timeout=120)
    found = re.search(r"<title>(.*?)</title>", done.stdout, re.S)
    assert done.stdout.strip(), done.stderr[-2000:]
    return found.group(1) if found else ""


@pytest.mark.skipif(browser() is None, reason="no Chromium on this machine (apt-get install chromium)")
def test_no_payload_runs_in_a_browser(feedback_html: str, tmp_path: Path):
    """Opened in headless Chromium, no payload runs: with the page's policy, and with the cleaning alone (the
    formgrader's pages carry no policy)."""
    with_policy = tmp_path / "feedback.html"
    with_policy.write_text(feedback_html)
    cleaning_alone = tmp_path / "feedback-without-policy.html"
    cleaning_alone.write_text(feedback_html.replace(CONTENT_SECURITY_POLICY, "default-src *"))
    assert CONTENT_SECURITY_POLICY in feedback_html
    for page in (with_policy, cleaning_alone):
        assert "pwned" not in rendered_title(page).lower(), page.name
    # The check is live: the same payload, uncleaned, does set the title.
    raw = tmp_path / "raw.html"
    raw.write_text("<html><head><title>feedback</title></head><body><img src=x onerror=\"document.title='pwned'\">")
    assert rendered_title(raw) == "pwned"
    # Why an SVG picture may stay: through <img>, even uncleaned and with no policy, its script never runs
    raw.write_text(
        f'<html><head><title>feedback</title></head><body><img src="data:image/svg+xml;base64,{SCRIPTED_SVG}">'
    )
    assert rendered_title(raw) == "feedback"
