#!/bin/sh
# The container's start: the models for LANGUAGES into MODELS_DIR (downloaded once, each file's
# SHA-256 checked, kept in the volume), then `reseam serve` in this process's place so that it
# gets the container's signals. Arguments are passed on to `reseam serve`.
#
# LANGUAGES=none fetches nothing (models put into the volume by other means). When the source
# cannot be reached or a download fails verification, the server still starts if the volume
# already holds installed models, and the container fails if it holds none; a bad LANGUAGES
# (exit code 2) always fails.
set -eu

: "${MODELS_DIR:=/models}"
: "${LANGUAGES:=ar,cs,de,es,fr,hi,id,it,ja,ko,nl,pl,pt,ru,tr,uk,vi,zh-Hans}"
: "${PRELOAD:=1}"
export MODELS_DIR PRELOAD

installed() {
    for manifest in "$MODELS_DIR"/*/manifest.json; do
        [ -f "$manifest" ] && return 0
    done
    return 1
}

if [ "$LANGUAGES" != none ]; then
    status=0
    reseam fetch "$LANGUAGES" || status=$?
    if [ "$status" -ne 0 ]; then
        if [ "$status" -eq 2 ]; then
            echo "reseam-entrypoint: LANGUAGES=$LANGUAGES was refused (exit 2)" >&2
            exit 2
        fi
        if ! installed; then
            echo "reseam-entrypoint: fetching LANGUAGES=$LANGUAGES failed (exit $status) and $MODELS_DIR holds no models" >&2
            exit "$status"
        fi
        echo "reseam-entrypoint: fetching LANGUAGES=$LANGUAGES failed (exit $status); serving the models already in $MODELS_DIR" >&2
    fi
fi

exec reseam serve "$@"
