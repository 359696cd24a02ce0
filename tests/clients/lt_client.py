"""libretranslatepy, the LibreTranslate client from PyPI, used as its users use it, against reseam serve.

Usage: python lt_client.py URL TOKEN TEXTS_FILE OUT_DIR

Writes into OUT_DIR what the client got back, for tests/clients/run to compare with reseam's CLI:
  translations   one translation (es→en) per line of TEXTS_FILE
  detections     `language<TAB>confidence` (0..100) of each line, the client's first candidate
  languages.json what languages() returned (without a key: LibreTranslate never asks for one there)
  refused        the HTTP status of a translation asked for without the key
"""

import json
import sys
import urllib.error
from pathlib import Path

from libretranslatepy import LibreTranslateAPI


def main() -> None:
    url, token, texts_file, out = sys.argv[1], sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4])
    texts = texts_file.read_text(encoding="utf-8").split("\n")
    if texts and texts[-1] == "":
        texts.pop()

    lt = LibreTranslateAPI(url, api_key=token)
    translations = [lt.translate(t, source="es", target="en") for t in texts]
    for t in translations:
        if not isinstance(t, str) or "\n" in t:
            sys.exit(f"translate() gave {t!r}: not a one-line string")
    (out / "translations").write_text("".join(t + "\n" for t in translations), encoding="utf-8")

    rows = []
    for t in texts:
        found = lt.detect(t)
        if not (isinstance(found, list) and found and {"language", "confidence"} <= found[0].keys()):
            sys.exit(f"detect() gave {found!r}: not a list of {{language, confidence}}")
        rows.append(f"{found[0]['language']}\t{float(found[0]['confidence']):.1f}\n")
    (out / "detections").write_text("".join(rows), encoding="utf-8")

    (out / "languages.json").write_text(
        json.dumps(LibreTranslateAPI(url).languages(), sort_keys=True) + "\n", encoding="utf-8"
    )

    try:
        got = LibreTranslateAPI(url).translate(texts[0], source="es", target="en")
        sys.exit(f"translate() without the key was answered: {got!r}")
    except urllib.error.HTTPError as e:
        body = json.loads(e.read().decode("utf-8"))
        if "error" not in body:
            sys.exit(f"the refusal has no 'error' field: {body!r}")
        (out / "refused").write_text(f"{e.code}\n", encoding="utf-8")


if __name__ == "__main__":
    main()
