"""The page as first sent: its words already in the phone's language, the language picked on the phone kept, the
home-screen name and icons in place."""

from __future__ import annotations

import json
import struct
from html.parser import HTMLParser

import pytest
from flask.testing import FlaskClient

from launcher.daemon import Daemon
from tests import test_web
from tests.test_browser import catalogue
from webui.words import LANG_COOKIE, LANGUAGES, fill_words
from webui.words import catalogue as raw_catalogue


class _Page(HTMLParser):
    """Each element with `data-i18n`, with the text inside it; the catalogue sent inside the page; the head's links."""

    def __init__(self) -> None:
        super().__init__()
        self.worded: list[tuple[str, str]] = []
        self.links: dict[str, str] = {}
        self.sent: tuple[str, str] | None = None
        self._open: list[tuple[str, str | None]] = []  # (tag, key) of the elements being read
        self._text: list[str] = []
        self.lang = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "html":
            self.lang = found.get("lang") or ""
        if tag == "link":
            self.links[found.get("rel") or ""] = found.get("href") or ""
        if tag in ("meta", "link", "input", "img", "br"):
            return
        key = found.get("data-i18n")
        if tag == "script" and found.get("id") == "strings":
            key = "strings:" + (found.get("data-lang") or "")
        self._open.append((tag, key))
        if key:
            self._text = []

    def handle_data(self, data: str) -> None:
        self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if not self._open or self._open[-1][0] != tag:
            return
        _, key = self._open.pop()
        if key and key.startswith("strings:"):
            self.sent = (key.removeprefix("strings:"), "".join(self._text))
        elif key:
            self.worded.append((key, "".join(self._text)))


def read(client: FlaskClient, picked: str | None = None, **headers: str) -> _Page:
    if picked is not None:
        client.set_cookie(LANG_COOKIE, picked)  # as the page's script sets it when a language is picked
    answer = client.get("/", headers=headers)
    assert answer.status_code == 200 and answer.mimetype == "text/html"
    page = _Page()
    page.feed(answer.get_data(as_text=True))
    return page


daemon = test_web.daemon  # the same in-process daemon fixture


@pytest.fixture
def client(daemon: Daemon) -> FlaskClient:
    return daemon.app.test_client()  # no session: a phone that has not joined yet sees the same page


@pytest.mark.parametrize(("accept", "lang"), [("en-GB", "en"), ("zh-CN,zh;q=0.9", "zh-Hans"), ("zh-TW", "zh-Hant")])
def test_the_first_answer_already_has_every_word_in_the_phones_language(
    client: FlaskClient, accept: str, lang: str
) -> None:
    words = catalogue(lang)
    page = read(client, **{"Accept-Language": accept})
    assert page.lang == lang
    assert len(page.worded) > 100  # the join form, the tabs, the setup: the whole page's fixed words
    wrong = [(key, text) for key, text in page.worded if text != words[key]]
    assert wrong == []
    assert dict(page.worded)["join.label"] == words["join.label"]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_page_brings_its_languages_catalogue_so_the_script_need_not_fetch_it(
    client: FlaskClient, lang: str
) -> None:
    page = read(client, lang)
    assert page.sent is not None
    sent_lang, sent = page.sent
    assert sent_lang == lang and json.loads(sent) == catalogue(lang)


def test_the_words_are_put_in_as_text_never_as_markup() -> None:
    # As the script's textContent would: a catalogue entry with markup in it shows as those characters.
    html = '<p id="a" data-i18n="k"></p><button class="b" data-i18n="gone" type="button"></button>'
    assert fill_words(html, {"k": "<b>Tom & Jerry</b>"}) == (
        '<p id="a" data-i18n="k">&lt;b&gt;Tom &amp; Jerry&lt;/b&gt;</p>'
        '<button class="b" data-i18n="gone" type="button">gone</button>'
    )


def test_the_language_picked_on_the_phone_wins_over_the_browsers(client: FlaskClient) -> None:
    assert read(client, "zh-Hant", **{"Accept-Language": "en-US"}).lang == "zh-Hant"
    assert read(client, "en", **{"Accept-Language": "zh-CN"}).lang == "en"


@pytest.mark.parametrize("picked", ["fr", "", "zh-Hant<script>", "ZH-HANT"])
def test_a_picked_language_the_page_does_not_speak_is_ignored(client: FlaskClient, picked: str) -> None:
    page = read(client, picked, **{"Accept-Language": "zh-CN"})
    assert page.lang == "zh-Hans"


def test_a_phone_that_has_the_page_is_answered_not_modified_and_each_language_has_its_own_tag(
    client: FlaskClient,
) -> None:
    first = client.get("/", headers={"Accept-Language": "en"})
    again = client.get("/", headers={"Accept-Language": "en", "If-None-Match": first.headers["ETag"]})
    assert again.status_code == 304
    chinese = client.get("/", headers={"Accept-Language": "zh-CN", "If-None-Match": first.headers["ETag"]})
    assert chinese.status_code == 200 and chinese.headers["ETag"] != first.headers["ETag"]
    assert {"Accept-Language", "Cookie"} <= set(first.headers["Vary"].replace(" ", "").split(","))


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_home_screen_name_is_in_the_pages_language(client: FlaskClient, lang: str) -> None:
    words = raw_catalogue(lang)  # a name on a home screen is one line: no places to break in it
    link = read(client, lang).links["manifest"]
    answer = client.get(link)
    assert answer.status_code == 200 and answer.mimetype == "application/manifest+json"
    manifest = answer.get_json(force=True)
    assert (manifest["lang"], manifest["name"], manifest["description"]) == (
        lang,
        words["app.title"],
        words["app.description"],
    )
    for icon in manifest["icons"]:
        with client.get(icon["src"]) as drawn:
            assert drawn.status_code == 200


def test_a_manifest_asked_in_an_unknown_language_comes_in_the_browsers(client: FlaskClient) -> None:
    answer = client.get("/manifest.webmanifest?lang=xx", headers={"Accept-Language": "zh-TW"})
    assert answer.get_json(force=True)["name"] == raw_catalogue("zh-Hant")["app.title"]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_phone_switching_language_gets_the_catalogue_a_page_in_it_has(client: FlaskClient, lang: str) -> None:
    """The language picker fetches the other catalogue: with the same places to break as a page sent in it."""
    fetched = client.get(f"/i18n/{lang}.json")
    assert fetched.status_code == 200
    shown = read(client, lang).sent
    assert shown is not None
    assert fetched.get_json() == json.loads(shown[1]) == catalogue(lang)


def test_an_unknown_language_is_a_clear_404(client: FlaskClient) -> None:
    answer = client.get("/i18n/xx.json")
    assert answer.status_code == 404
    error = answer.get_json()["error"]
    assert error["code"] == "no_language" and "zh-Hant" in error["message"]


def test_iphones_get_a_png_icon_to_put_on_the_home_screen(client: FlaskClient) -> None:
    link = read(client).links["apple-touch-icon"]
    with client.get(link) as answer:
        assert answer.status_code == 200 and answer.mimetype == "image/png"
        png = answer.get_data()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])  # the IHDR chunk comes first
    assert (width, height) == (180, 180)  # what iPhones ask for; smaller ones scale it down
