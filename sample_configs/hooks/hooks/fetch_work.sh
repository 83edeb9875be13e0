#!/bin/sh
# FETCH_WORK: stdin is the slot ad. Print one job ad (old ClassAd lines) or nothing for "no work".
queue="$(dirname "$0")/../queue"
job=$(ls "$queue" 2>/dev/null | grep '\.job$' | head -1)
[ -n "$job" ] || exit 0
cat "$queue/$job" && mv "$queue/$job" "$queue/$job.taken"
