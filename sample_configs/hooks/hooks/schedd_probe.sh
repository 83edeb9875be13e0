#!/bin/sh
# Schedd Cron job: each line becomes Sample_<line> in the schedd ad (SCHEDD_CRON_QUEUEPROBE_PREFIX).
queue="$(dirname "$0")/../queue"
echo "FetchQueueLength = $(ls "$queue" 2>/dev/null | grep -c '\.job$')"
echo 'ProbedBy = "schedd_probe.sh"'
