/*
 * batch_report.h: the JSON report of `gerewrite batch`, shared by the
 * batch (cmd_batch.c) and `gerewrite report merge` (cmd_report.c), so
 * that a merged report and a single run's are computed the same way.
 */
#ifndef GE_BATCH_REPORT_H
#define GE_BATCH_REPORT_H

#include <jansson.h>

/* The summary of an array of model entries: total, ok, failed, skipped,
 * the paths of the failed models, and when some were verified, the
 * verify figures (models, outside their bound, largest differences). */
json_t *batch_summary(const json_t *models);
/* Writes a report to path atomically; 0, or EXIT_USAGE after a message. */
int batch_report_write(const json_t *r, const char *path);

#endif
