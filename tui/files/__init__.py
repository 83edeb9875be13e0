"""Files the dashboard writes or watches: routing-table files, exports."""
