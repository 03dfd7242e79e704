/* SPDX-License-Identifier: MIT */
/*
 * Private to the action files: wb_actions.c (the table, the key map,
 * dispatch, config lines, and the helpers below), wb_act_view.c (moving,
 * search, filter, zoom, the screen), wb_act_edit.c (manifest edits, the pair
 * picker), wb_act_files.c (files and outputs).  The rest of the workbench
 * reaches actions through wb.h only.
 */
#ifndef WB_ACT_H
#define WB_ACT_H

#include "wb.h"

/* every handler of the table (WB_REQ_LIST) */
#define WB_X_(id, name, k1, k2, fn, help) void fn(struct wb *wb, const char *arg);
WB_REQ_LIST(WB_X_)
#undef WB_X_

/* wb_actions.c: helpers */
struct pane *list_pane(struct wb *wb);
size_t sel_row(struct wb *wb);
const char *sel_path(struct wb *wb);
void set_filter(struct wb *wb, const char *text);
bool select_row(struct wb *wb, size_t row);
const struct tm_manifest_file *sel_file(struct wb *wb);
void msg(struct wb *wb, enum wb_role role, const char *text);
const char *sel_trace(struct wb *wb);
void ask(struct wb *wb, enum wb_request req, enum wb_complete kind, const char *label,
	 const char *initial);
void confirm(struct wb *wb, enum wb_confirm c, const char *question);
bool wants_prompt(const struct wb *wb, const char *arg);
void run(struct wb *wb, enum wb_request req, const char *arg);
void answer(struct wb *wb, enum wb_request req, enum wb_confirm c, const char *line);

/* wb_act_view.c */
void set_focus(struct wb *wb, enum wb_pane_id id);

/* wb_actions.c: the request a key is bound to (user bindings first) */
enum wb_request keymap_lookup(int key);

/* wb_act_browse.c: the events list and tracks view while open */
void browse_key(struct wb *wb, int key);

/* wb_act_edit.c: the pair picker */
void picker_close(struct wb *wb);
void picker_key(struct wb *wb, int key);

#endif
