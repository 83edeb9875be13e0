#!/bin/sh
# UPDATE_JOB_INFO: advisory; log the job id and wall clock so far.
awk -F' = ' '$1=="ClusterId"{c=$2} $1=="RemoteWallClockTime"{w=$2} END{print "update", c, w}' >> "$(dirname "$0")/../hooks.log"
