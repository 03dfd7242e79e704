/* SPDX-License-Identifier: MIT */
/*
 * Workbench internals shared by the tui/wb_*.c files: the one state struct,
 * the request table (X-macro driving keys, help and :commands), style roles,
 * and the prototypes of each module (view_, edit_, prompt_, theme_, out_).
 * The model is the engine session plus a manifest value; every edit makes a
 * new manifest (undo is a stack of copies) and re-evaluates at once.
 */
#ifndef TM_WB_H
#define TM_WB_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tracemerge.h"

/* ---- requests: id, :command name, default keys, help ---- */
#define WB_KEY_CTRL(c) ((c) & 0x1f)
#define WB_REQ_LIST(X)                                                                             \
	X(REQ_DOWN, "move-down", 'j', KEY_DOWN, "Select the next file (or scroll the manifest)")  \
	X(REQ_UP, "move-up", 'k', KEY_UP, "Select the previous file (or scroll the manifest)")    \
	X(REQ_FIRST, "move-first", 'g', KEY_HOME, "Select the first file")                          \
	X(REQ_LAST, "move-last", 'G', KEY_END, "Select the last file")                              \
	X(REQ_FOCUS, "focus", '\t', 0, "Switch focus between the file list and the manifest")     \
	X(REQ_DETAILS_DOWN, "details-down", 'd', KEY_NPAGE, "Scroll the file's details (wraps to the top)") \
	X(REQ_DETAILS_UP, "details-up", KEY_PPAGE, 0, "Scroll the file's details back")          \
	X(REQ_MACHINE, "machine", 'm', 0, "Assign a machine to the file (Default clears it)")      \
	X(REQ_ADD_MACHINE, "add-machine", 'M', 0, "+ Add machine (\"Machine N\") for the file")    \
	X(REQ_RENAME_MACHINE, "rename-machine", 'R', 0, "Rename the file's machine everywhere")     \
	X(REQ_DELETE_MACHINE, "delete-machine", 'D', 0, "Delete the file's machine (files go Default)") \
	X(REQ_MERGE_MACHINE, "merge-machine", 'J', 0, "Merge the file's machine into another")      \
	X(REQ_NAME_IDS, "name-id", 'i', 0, "Name an embedded machine id (id=name)")                  \
	X(REQ_AUTO, "auto", 'a', 0, "Align the file automatically (remove its clocks entry)")      \
	X(REQ_OFFSET, "offset", 'o', 0, "Set a fixed offset (units: ns us ms s)")                   \
	X(REQ_REF, "ref", 'r', 0, "Reference for the offset: FILE[:CLOCK][@MACHINE]")              \
	X(REQ_CLOCK, "clock", 'K', 0, "The file's own clock for the offset (empty: PIN)")          \
	X(REQ_NUDGE_MS_DOWN, "nudge-ms-down", '[', 0, "Offset -1 ms")                               \
	X(REQ_NUDGE_MS_UP, "nudge-ms-up", ']', 0, "Offset +1 ms")                                   \
	X(REQ_NUDGE_S_DOWN, "nudge-s-down", '{', 0, "Offset -1 s")                                  \
	X(REQ_NUDGE_S_UP, "nudge-s-up", '}', 0, "Offset +1 s")                                      \
	X(REQ_NUDGE_US_DOWN, "nudge-us-down", '<', 0, "Offset -1 us")                               \
	X(REQ_NUDGE_US_UP, "nudge-us-up", '>', 0, "Offset +1 us")                                   \
	X(REQ_TRACE_TIME, "trace-time", 't', 0, "Timeline clock: CLOCK [FILE [MACHINE]]")            \
	X(REQ_BASELINE, "baseline", 'b', 0, "Make the file own the timeline (trace_time.file)")    \
	X(REQ_ATTR, "attr", 'A', 0, "Set an attribute: key=value (empty value removes)")           \
	X(REQ_UNDO, "undo", 'u', 0, "Undo the last edit")                                           \
	X(REQ_REDO, "redo", WB_KEY_CTRL('r'), 'U', "Redo")                                          \
	X(REQ_COPY, "copy", 'c', 0, "Copy the manifest to the clipboard (OSC 52)")                  \
	X(REQ_SAVE_MANIFEST, "save-manifest", 'e', 0, "Write the manifest JSON to a file")          \
	X(REQ_WRITE, "write", 'w', 0, "Write the merged TAR")                                       \
	X(REQ_ZOOM_IN, "zoom-in", '+', '=', "Zoom the timeline in")                                 \
	X(REQ_ZOOM_OUT, "zoom-out", '-', 0, "Zoom the timeline out")                                \
	X(REQ_CANCEL_SCAN, "cancel-scan", 'x', 0, "Cancel the background scan")                    \
	X(REQ_HELP, "help", '?', 'h', "Show this help")                                             \
	X(REQ_PROMPT, "prompt", ':', 0, "Open the command prompt")                                  \
	X(REQ_REDRAW, "redraw", WB_KEY_CTRL('l'), 0, "Redraw the screen")                           \
	X(REQ_QUIT, "quit", 'q', 0, "Quit (asks when edits are unsaved)")                           \
	X(REQ_QUIT_NOW, "quit-now", 'Q', 0, "Quit without asking")

enum wb_request {
	REQ_NONE = 0,
#define WB_X_(id, name, k1, k2, help) id,
	WB_REQ_LIST(WB_X_)
#undef WB_X_
	REQ__COUNT
};

struct wb_request_info {
	enum wb_request req;
	const char *name;
	int key1, key2;
	const char *help;
};
const struct wb_request_info *keymap_info(enum wb_request r);
enum wb_request keymap_lookup(int key);
enum wb_request keymap_by_name(const char *name);
bool keymap_bind(const char *key_spec, const char *req_name);
/* "j", "<Down>", "<C-r>", "<Tab>" */
void keymap_key_name(int key, char *buf, size_t len);
int keymap_parse_key(const char *spec, size_t *used);

/* ---- style roles ---- */
#define WB_ROLE_LIST(X)                                                                            \
	X(ROLE_DEFAULT, "default")                                                                 \
	X(ROLE_TITLE, "title")                                                                     \
	X(ROLE_STATUS, "status")                                                                   \
	X(ROLE_CURSOR, "cursor")                                                                   \
	X(ROLE_CURSOR_BLUR, "cursor-blur")                                                         \
	X(ROLE_HEADER, "header")                                                                   \
	X(ROLE_KEY_HINT, "key-hint")                                                               \
	X(ROLE_DIM, "dim")                                                                         \
	X(ROLE_ESCAPE, "escape")                                                                   \
	X(ROLE_ERROR, "diag-error")                                                                \
	X(ROLE_WARNING, "diag-warning")                                                            \
	X(ROLE_INFO, "diag-info")                                                                  \
	X(ROLE_OK, "diag-ok")                                                                      \
	X(ROLE_CLOCK, "clock")                                                                     \
	X(ROLE_MACHINE, "machine")                                                                 \
	X(ROLE_BAR, "timeline-bar")                                                                \
	X(ROLE_DROPPED, "timeline-dropped")                                                        \
	X(ROLE_ZERO, "timeline-zero")                                                              \
	X(ROLE_CHANGED, "offset-changed")

enum wb_role {
#define WB_X_(id, name) id,
	WB_ROLE_LIST(WB_X_)
#undef WB_X_
	ROLE__COUNT
};

/* ---- the state ---- */
struct wb_stack {
	struct tm_manifest *v;
	size_t n, cap;
};

enum wb_prompt_kind {
	PROMPT_NONE = 0,
	PROMPT_COMMAND,
	PROMPT_MACHINE,
	PROMPT_RENAME_MACHINE,
	PROMPT_MERGE_MACHINE,
	PROMPT_NAME_ID,
	PROMPT_OFFSET,
	PROMPT_REF,
	PROMPT_CLOCK,
	PROMPT_TRACE_TIME,
	PROMPT_ATTR,
	PROMPT_WRITE,
	PROMPT_SAVE_MANIFEST,
	PROMPT_OPEN,
	PROMPT_CONFIRM, /* y/n: confirm_action */
};

enum wb_confirm {
	CONFIRM_NONE,
	CONFIRM_QUIT,
	CONFIRM_OVERWRITE,
	CONFIRM_RESTORE,
};

struct wb {
	/* inputs */
	char **paths; /* trace inputs given to the session */
	size_t n_paths;
	char *demo_dir;
	struct tm_session *s;
	char *open_error;

	/* manifest and history */
	struct tm_manifest man;
	struct tm_manifest saved; /* last written/saved; for "unsaved edits" */
	struct wb_stack undo, redo;
	unsigned next_machine_n; /* "Machine N": counts up, never reused */
	char **extra_machines;   /* registry names not (yet) used by any file */
	size_t n_extra_machines;

	/* evaluation */
	struct tm_report *rep;
	char *eval_error;

	/* background scan */
	pthread_t worker;
	bool worker_running;
	volatile bool cancel;
	volatile int scan_finished; /* set by the worker when done */
	bool scan_cancelled;
	bool scanned;

	char *baseline; /* the file offsets default to (the dialog's baseline) */

	/* view */
	size_t sel;     /* row in the file list */
	size_t top;     /* first visible row */
	bool focus_manifest;
	size_t man_scroll;
	size_t det_scroll;  /* first details line shown */
	size_t det_sel;     /* the row det_scroll belongs to (reset on a new row) */
	bool det_more;      /* the details are cut: d scrolls (set by view_draw) */
	int det_lines, det_rows; /* wrapped lines, rows shown (set by view_draw) */
	bool help;
	size_t help_scroll;
	int zoom;
	bool ascii;
	bool mono;
	char msg[1024];
	enum wb_role msg_role;

	/* prompt */
	enum wb_prompt_kind prompt;
	enum wb_confirm confirm;
	char *prompt_text;
	char *pending_write; /* path awaiting overwrite confirmation */

	/* output */
	char *written; /* path of the last written TAR */
	bool demo_output; /* a TAR or manifest was written into demo_dir: keep it */
	bool print_manifest_on_exit;
	bool copied;

	/* run mode */
	bool headless;
	FILE *script;
	int script_line;
	bool quit;
	int exit_status;
	FILE *tty_out; /* where OSC 52 goes (NULL in headless mode) */
	FILE *null_in, *null_out;
	char *recovery_path;
	const char *theme_name;
	char *config_path;
};

extern volatile sig_atomic_t wb_got_signal;

/* wb_main.c */
void wb_set_msg(struct wb *wb, enum wb_role role, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void wb_evaluate(struct wb *wb);
size_t wb_n_rows(const struct wb *wb);
/* Session member index of list row i. */
size_t wb_row_member(const struct wb *wb, size_t row);
/* The report's file for list row i, or NULL. */
const struct tm_report_file *wb_row_file(const struct wb *wb, size_t row);
/* Display name of a member: its archive path, else the base name of the input (borrowed). */
const char *wb_member_name(const struct wb *wb, size_t member);
void wb_draw_now(struct wb *wb);
/* Does path own the timeline in the current report? */
bool wb_owns_timeline(const struct wb *wb, const char *path);
/* What an offset off on path against ref does, in words: "moves later", or,
 * when path owns the timeline, "stays put: it owns the timeline; REF moves
 * +1 ms instead" (from the report, which tells what moved). */
/* The reference of an offset on the owner moves by -offset: true unless it
 * has a clocks entry of its own (then that entry places it). */
bool wb_ref_follows(const struct wb *wb, const char *ref);
void wb_offset_effect(const struct wb *wb, const char *path, int64_t off, const char *ref,
		      char *buf, size_t len);
/* Note a written output (TAR or manifest): inside the demo dir it is kept. */
void wb_note_output(struct wb *wb, const char *path);

/* wb_view.c */
void view_draw(struct wb *wb);
/* The screen as text; with roles, then a run-length map of style roles per row. */
bool view_dump_screen(struct wb *wb, const char *path, bool roles);
/* Draw untrusted text escaped, at most max_cols columns (truncated with '~'). */
int view_put_escaped(const char *s, size_t len, int max_cols, int base_attr);
/* Escaped and truncated copy (for non-curses output); caller frees. */
char *view_escape_cols(const char *s, int max_cols);

/* wb_edit.c */
void edit_request(struct wb *wb, enum wb_request req);
void edit_command(struct wb *wb, const char *line);
void edit_prompt_done(struct wb *wb, enum wb_prompt_kind kind, const char *line);
void edit_commit(struct wb *wb, struct tm_manifest *next, const char *what);
bool edit_is_dirty(const struct wb *wb);
void edit_stack_fini(struct wb_stack *st);
/* Every machine name known to the editor (manifest names plus added ones). */
size_t edit_machine_names(const struct wb *wb, char ***out);

/* wb_prompt.c */
void prompt_init(struct wb *wb);
void prompt_fini(void);
void prompt_open(struct wb *wb, enum wb_prompt_kind kind, const char *label, const char *initial);
void prompt_close(struct wb *wb);
/* Feed one key (byte or KEY_*) to the open prompt. */
void prompt_feed(struct wb *wb, int key);
/* The prompt line as displayed and the cursor column within it. */
const char *prompt_line(int *cursor_cols);

/* wb_theme.c */
void theme_init(struct wb *wb);
int theme_attr(enum wb_role role);
/* Apply one config line; returns false with a message in err. */
bool theme_config_line(struct wb *wb, const char *line, char *err, size_t err_len);
bool theme_load_file(struct wb *wb, const char *path, bool quiet);
const char *theme_role_name(enum wb_role r);

/* wb_out.c */
void out_copy_manifest(struct wb *wb);
bool out_save_manifest(struct wb *wb, const char *path);
void out_write_tar(struct wb *wb, const char *path, bool overwrite);
char *out_recovery_path(const struct wb *wb);
bool out_save_recovery(struct wb *wb);
void out_exit_message(struct wb *wb);
/* Standard base64 of data; caller frees. */
char *out_base64(const void *data, size_t len);

#endif
