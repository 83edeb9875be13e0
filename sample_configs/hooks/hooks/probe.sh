#!/bin/sh
# Startd Cron job: argv[0] is the job name; each line becomes Sample_<line> in every slot ad.
echo "Ready = true"
echo "QueueLength = $(ls "$(dirname "$(readlink -f "$0" 2>/dev/null || echo "$0")")/../queue" 2>/dev/null | grep -c '\.job$')"
