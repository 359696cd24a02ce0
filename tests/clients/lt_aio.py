"""libretranslate-aio (a LibreTranslate client on httpx, from PyPI), used as its users use it, against
reseam serve: the second LibreTranslate client beside libretranslatepy.

Usage: python lt_aio.py URL TOKEN DIR   (DIR as tests/clients/libraries prepares it)

Prints each call's outcome as `ok   <call>: <result>` or `FAIL <call>: <why>`; exits 1 if any failed.
"""

import asyncio
import sys
from pathlib import Path

import libretranslate_aio as lta

URL, TOKEN, DIR = sys.argv[1], sys.argv[2], Path(sys.argv[3])
failed = []


def read_lines(name):
    return (DIR / name).read_text(encoding="utf-8").splitlines()


def check(call, ok, result):
    print(f"{'ok  ' if ok else 'FAIL'} {call}: {result}", flush=True)
    if not ok:
        failed.append(call)


def main():
    one, one_en = read_lines("one.es")[0], read_lines("one.en")[0]
    texts, texts_en = read_lines("list.es"), read_lines("list.en")
    page, page_en = read_lines("page.html")[0], read_lines("page.en.html")[0]

    with lta.LibreTranslate(URL, api_key=TOKEN) as lt:
        r = lt.translate(one, "es", "en")
        check("translate(one text, es, en)", r.translated_text == one_en, f"= reseam translate: {r.translated_text == one_en}")
        r = lt.translate(one, "auto", "en")
        lang = getattr(r.detected_language, "language", None)
        check(
            "translate(one text, auto, en)",
            r.translated_text == one_en and lang == "es",
            f"= reseam translate: {r.translated_text == one_en}, detected_language {lang}",
        )
        # A list goes as repeated form fields `q`; reseam answers one translation each.
        r = lt.translate(texts, "es", "en")
        check(
            f"translate(list of {len(texts)}, es, en)",
            r.translated_text == texts_en,
            f"= reseam translate: {r.translated_text == texts_en}",
        )
        r = lt.translate(page, "es", "en", format="html")
        check("translate(HTML, format=html)", r.translated_text == page_en, f"= reseam translate --html: {r.translated_text == page_en}")
        d = lt.detect(one)
        check("detect(one text)", bool(d) and d[0].language == "es", f"{[(x.language, x.confidence) for x in d]}")
        langs = {x.code: x.targets for x in lt.languages()}
        check("languages()", langs.get("es") == ["en"], f"{langs}")
        s = lt.frontend_settings()
        check("frontend_settings()", s.api_keys and s.key_required, f"api_keys {s.api_keys}, key_required {s.key_required}")
        check("health()", lt.health(), "ok")
        try:
            r = lt.translate(one, "es", "zz")
            check("translate(target zz)", False, f"answered {r!r}")
        except lta.BadRequestError as e:
            check("translate(target zz)", "is not supported" in e.message, f"BadRequestError: {e.message}")

    async def wrong_key():
        async with lta.AsyncLibreTranslate(URL, api_key="wrong-" + TOKEN) as lt:
            return await lt.translate(one, "es", "en")

    try:
        r = asyncio.run(wrong_key())
        check("AsyncLibreTranslate.translate with a wrong key", False, f"answered {r!r}")
    except lta.ForbiddenError as e:
        check("AsyncLibreTranslate.translate with a wrong key", e.message == "Invalid API key", f"ForbiddenError: {e.message}")

    if failed:
        print(f"libretranslate-aio: {len(failed)} call(s) failed", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
