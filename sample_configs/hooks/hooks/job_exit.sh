#!/bin/sh
# JOB_EXIT: $1 is exit/hold/remove/evict; stdin has ExitCode. Waited for; output ignored.
awk -v why="$1" -F' = ' '$1=="ClusterId"{c=$2} $1=="ExitCode"{e=$2} END{print "exit", why, c, e}' >> "$(dirname "$0")/../hooks.log"
