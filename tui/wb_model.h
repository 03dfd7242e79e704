/* SPDX-License-Identifier: MIT */
/*
 * Private to the model's files (wb_model.c: lifetime, rows, evaluation,
 * details, scanning, opening; wb_model_files.c: the set of files;
 * wb_model_undo.c: undo, saved state, recovery; wb_model_edit.c: edits):
 * what one of them defines and another calls.  The rest of the workbench
 * calls the model through wb.h only.
 */
#ifndef WB_MODEL_H
#define WB_MODEL_H

#include "wb.h"

/* wb_model.c */
void timeline_data(struct wb_model *m);
void details_stop(struct wb_model *m);
void outdated_hint(struct wb_model *m);
void scan_start(struct wb_model *m);
struct tm_session *open_paths(struct wb_model *m, char **paths, size_t n, char **why);
void install_session(struct wb_model *m, struct tm_session *s);

/* wb_model_files.c */
void close_session(struct wb_model *m);
void free_paths(char **paths, size_t n);
bool reopen_step(struct wb_model *m, char **paths, size_t n, const char *what, bool step);
bool reopen(struct wb_model *m, char **paths, size_t n, const char *what);
void reopened(struct wb_model *m, const char *what);
bool link_folder(struct wb_model *m, char *dir, size_t len);
bool link_path(struct wb_model *m, const char *dir, const char *src, const char *name, char **out);

/* wb_model_undo.c */
char **dup_paths(char *const *paths, size_t n);
void stack_push_set(struct wb_stack *st, const struct tm_manifest *man, char *const *paths,
		    size_t n);
void stack_fini(struct wb_stack *st);
void stack_clear(struct wb_stack *st);
bool same_paths(char *const *a, size_t na, char *const *b, size_t nb);

/* wb_model_edit.c */
char *offered_name(struct wb_model *m);

#endif
