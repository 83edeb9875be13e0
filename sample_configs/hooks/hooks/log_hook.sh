#!/bin/sh
# REPLY_FETCH (argument accept/reject) and EVICT_CLAIM (no argument): advisory.
echo "reply ${1:-evict}" >> "$(dirname "$0")/../hooks.log"
