"""deepl (DeepL's official Python library, from PyPI), used as its users use it, against reseam serve.

Usage: python deepl_py.py URL BUSY_URL TOKEN DIR

DIR holds what tests/clients/run prepared: one.es / one.en (one text and `reseam translate`'s
output), list.es / list.en, page.html / page.en.html (`--html`), hog.json (a long request that keeps
the BUSY_URL server, one compute slot and no queue, busy). Each call's outcome is printed as
`ok   <call>: <result>` or `FAIL <call>: <why>`; the exit status is 1 if any failed.
"""

import json
import sys
import threading
import time
import urllib.request
from pathlib import Path

import deepl

URL, BUSY_URL, TOKEN, DIR = sys.argv[1], sys.argv[2], sys.argv[3], Path(sys.argv[4])
failed = []


def read_lines(name):
    return (DIR / name).read_text(encoding="utf-8").splitlines()


def check(call, ok, result):
    print(f"{'ok  ' if ok else 'FAIL'} {call}: {result}", flush=True)
    if not ok:
        failed.append(call)


def raises(call, exc_type, fn, *must_contain):
    try:
        got = fn()
    except exc_type as e:
        text = str(e)
        check(call, all(m in text for m in must_contain), f"{type(e).__name__}: {text}")
        return
    except Exception as e:  # noqa: BLE001 - any other exception is the failure reported
        check(call, False, f"raised {type(e).__name__} instead of {exc_type.__name__}: {e}")
        return
    check(call, False, f"no {exc_type.__name__}; returned {got!r}")


def metric(url, name):
    req = urllib.request.Request(url + "/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    text = urllib.request.urlopen(req, timeout=10).read().decode()
    for line in text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def hog(url, seconds):
    """Keeps the busy server computing for `seconds`: the long request, back to back."""
    body = (DIR / "hog.json").read_bytes()
    stop = time.time() + seconds

    def run():
        while time.time() < stop:
            req = urllib.request.Request(
                url + "/v1/translate",
                data=body,
                headers={"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}"},
            )
            urllib.request.urlopen(req, timeout=120).read()

    t = threading.Thread(target=run)
    t.start()
    while metric(url, "reseam_inflight_requests") < 1:
        time.sleep(0.005)
    return t


def main():
    one, one_en = read_lines("one.es")[0], read_lines("one.en")[0]
    texts, texts_en = read_lines("list.es"), read_lines("list.en")
    page, page_en = (DIR / "page.html").read_text(encoding="utf-8").rstrip("\n"), read_lines("page.en.html")[0]
    client = deepl.DeepLClient(TOKEN, server_url=URL)
    # Usage counts every client of the server since it started: what this script bills adds to it.
    start = client.get_usage().character.count
    billed = start

    r = client.translate_text(one, source_lang="ES", target_lang="EN-US")
    billed += len(one)
    check(
        "translate_text(one text, source_lang=ES, target_lang=EN-US)",
        r.text == one_en and r.detected_source_lang == "ES" and r.billed_characters == len(one),
        f"text = reseam translate: {r.text == one_en}, detected_source_lang {r.detected_source_lang}, "
        f"billed_characters {r.billed_characters} (len {len(one)})",
    )
    rs = client.translate_text(texts, target_lang="EN-GB")
    billed += sum(len(t) for t in texts)
    check(
        f"translate_text(list of {len(texts)}, no source_lang, target_lang=EN-GB)",
        [x.text for x in rs] == texts_en and all(x.detected_source_lang == "ES" for x in rs),
        f"texts = reseam translate: {[x.text for x in rs] == texts_en}, detected {sorted({x.detected_source_lang for x in rs})}",
    )
    r = client.translate_text(page, source_lang="ES", target_lang="EN-US", tag_handling="html")
    billed += len(page)
    check(
        "translate_text(HTML, tag_handling=html)",
        r.text == page_en,
        f"= reseam translate --html: {r.text == page_en}",
    )
    r = client.translate_text(
        one, target_lang="EN-US", formality="prefer_more", model_type="prefer_quality_optimized", split_sentences="1",
        preserve_formatting=True,
    )
    billed += len(one)
    check(
        "translate_text(formality=prefer_more, model_type=prefer_quality_optimized, split_sentences, preserve_formatting)",
        r.text == one_en and r.model_type_used == "latency_optimized",
        f"text = reseam translate: {r.text == one_en}, model_type_used {r.model_type_used}",
    )
    raises(
        "translate_text(formality=more) into EN-US, which has no formality",
        deepl.DeepLException,
        lambda: client.translate_text(one, target_lang="EN-US", formality="more"),
        "Bad request",
        "Target language",
        "formality",
    )
    raises(
        "translate_text(glossary=<an id this server does not have>)",
        deepl.DeepLException,
        lambda: client.translate_text(
            one, source_lang="ES", target_lang="EN-US", glossary="0a6c701e-303a-41ba-a167-857c5b720a4c"
        ),
        "Glossary not found",
    )
    raises(
        "get_glossary(<id>)",
        deepl.GlossaryNotFoundException,
        lambda: client.get_glossary("0a6c701e-303a-41ba-a167-857c5b720a4c"),
        "Glossary not found",
    )
    pairs = client.get_glossary_languages()
    check("get_glossary_languages()", pairs == [], f"{pairs}")
    glossaries = client.list_glossaries()
    check("list_glossaries()", glossaries == [], f"{glossaries}")
    doc_in, doc_out = DIR / "doc.txt", DIR / "doc.en.txt"
    doc_in.write_text(one + "\n", encoding="utf-8")
    # The upload is refused (400), which the library raises as it comes (a DeepLException; only a
    # failure after the upload is wrapped in DocumentTranslationException).
    raises(
        "translate_document_from_filepath(a .txt)",
        deepl.DeepLException,
        lambda: client.translate_document_from_filepath(doc_in, doc_out, target_lang="EN-US"),
        "Bad request",
        "Document translation is not supported",
    )
    check("  ... leaves no output file", not doc_out.exists(), f"exists: {doc_out.exists()}")

    u = client.get_usage()
    check(
        "get_usage()",
        u.character.count == billed and u.character.limit == 10**12 and not u.any_limit_reached,
        f"character {u.character} ({start} before, expected {billed}), any_limit_reached {u.any_limit_reached}",
    )
    sources = [(x.code, x.name) for x in client.get_source_languages()]
    check("get_source_languages()", sources == [("ES", "Spanish")], f"{sources}")
    targets = [(x.code, x.supports_formality) for x in client.get_target_languages()]
    check("get_target_languages()", targets == [("EN-GB", False), ("EN-US", False)], f"{targets}")

    bad = deepl.DeepLClient("wrong-" + TOKEN, server_url=URL)
    raises("translate_text with a wrong key", deepl.AuthorizationException, lambda: bad.translate_text(one, target_lang="EN-US"))
    raises("get_usage() with a wrong key", deepl.AuthorizationException, bad.get_usage)

    # A busy server (its one compute slot taken, no queue): 429, which the library retries
    # with backoff (1 s, 1.6 s, ...) and raises as TooManyRequestsException when out of retries.
    busy = deepl.DeepLClient(TOKEN, server_url=BUSY_URL)
    deepl.http_client.max_network_retries = 0
    for attempt in range(5):
        t = hog(BUSY_URL, 1.0)
        try:
            busy.translate_text(one, target_lang="EN-US")
            outcome = None  # the slot came free between the check and the call: try again
        except deepl.TooManyRequestsException as e:
            outcome = (True, f"TooManyRequestsException: {e}")
        except Exception as e:  # noqa: BLE001
            outcome = (False, f"{type(e).__name__}: {e}")
        t.join()
        if outcome:
            break
    else:
        outcome = (False, "the server was never busy at the call (5 attempts)")
    check("translate_text on a busy server, max_network_retries = 0", *outcome)

    deepl.http_client.max_network_retries = 5
    before = metric(BUSY_URL, 'reseam_http_requests_total{route="v2_translate",code="429"}')
    # One long request (about 1 s here): over within the library's retries even on a loaded machine.
    t = hog(BUSY_URL, 0.2)
    started = time.time()
    r = busy.translate_text(one, target_lang="EN-US")
    took = time.time() - started
    t.join()
    refused = metric(BUSY_URL, 'reseam_http_requests_total{route="v2_translate",code="429"}') - before
    check(
        "translate_text on a busy server, default retries",
        r.text == one_en and refused >= 1,
        f"answered after {refused:.0f} 429 answer(s) and {took:.1f} s; text = reseam translate: {r.text == one_en}",
    )

    if failed:
        print(f"deepl (Python): {len(failed)} call(s) failed", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
