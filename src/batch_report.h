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

/*
 * What an earlier run of the same batch (head: recipe, parameters and
 * shard) left in the report directory dir for shard i: the entries of
 * report-I.json, and of the journal .report-I.journal, where a run
 * appends each model's entry as it ends (so a task killed before its
 * report keeps them).  An object from path to entry; empty when there is
 * nothing, or only another batch's.
 */
json_t *batch_prior_entries(const char *dir, long i, const json_t *head);
/* Starts the journal of shard i anew with its head line; the descriptor,
 * or -1 after a message. */
int batch_journal_start(const char *dir, long i, const json_t *head);
/* Appends one entry (one line, one write). */
void batch_journal_add(int fd, const json_t *entry);
/* Closes the journal and removes it: the report holds it all. */
void batch_journal_end(int fd, const char *dir, long i);

#endif
