/*
 * batch_scan.h: the decisions of `gerewrite batch` about files it finds
 * (batch_scan.c).
 */
#ifndef GE_BATCH_SCAN_H
#define GE_BATCH_SCAN_H

#include <stddef.h>

/* Whether a directory holds a chunked SavedModel (saved_model.cpb) and no
 * saved_model.pb or saved_model.pbtxt to read instead. */
int batch_chunked_dir(const char *dir);
/* Why a file found by name is skipped (a chunked SavedModel, a text proto
 * of another message), written into buf; NULL when it is to be run (a
 * model, or a broken one whose load will say what is wrong). */
const char *batch_skip_reason(const char *path, char *buf, size_t cap);

#endif
