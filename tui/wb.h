/* SPDX-License-Identifier: MIT */
/*
 * The workbench's rooms and who calls whom (each file calls only the ones
 * listed after it; never back up):
 *
 *   wb_main.c     entry, terminal, event loop, script mode (test harness)
 *   wb_frame.c    prepares a frame: measures text, runs the layout, clamps the
 *                 panes, chooses the key hints and help lines (never draws)
 *   wb_actions.c  the ONE action table (key, name, help, handler), keymap,
 *                 dispatch of keys, :commands and prompt answers, config lines;
 *                 the handlers by group: wb_act_view.c (move, search, zoom,
 *                 screen), wb_act_edit.c (edits, pair picker), wb_act_files.c
 *                 (files, outputs); wb_act.h: theirs
 *   wb_out.c      clipboard, manifest and TAR output, recovery, exit message
 *   wb_prompt.c   readline text fields (answers go back to the caller)
 *   wb_view.c     draws a prepared frame; reads the state, never writes it
 *   wb_text.c     paragraphs (details, verdict, owner) and their wrapping
 *   wb_layout.c   the pure layout function and the panes (geometry,
 *                 selection, scroll; the file list's lines through its
 *                 filter; the one match rule of filter and search)
 *   wb_theme.c    style roles and colours
 *   wb_model.c    the model: inputs, session, rows and names, evaluation,
 *                 messages; wb_model_files.c the set of files (add, remove,
 *                 rename, order); wb_model_undo.c undo/redo, dirty state,
 *                 recovery; wb_model_edit.c the edits (wb_model.h: theirs)
 *   wb_align.c    the model's alignment edits: estimates, pairs, solve, a
 *                 machine of its own, the fixes the engine proved
 *
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

struct wb;

/* ==== the action table: id, :command name, default keys, handler, help ====
 * Adding a request: one line here and its handler in a wb_act_*.c file.  The
 * help screen and the man page's KEY BINDINGS are generated from it. */
#define WB_KEY_CTRL(c) ((c) & 0x1f)
#define WB_REQ_LIST(X)                                                                             \
	X(REQ_DOWN, "move-down", 'j', KEY_DOWN, act_down, "Select the next file (in details or manifest: scroll)") \
	X(REQ_UP, "move-up", 'k', KEY_UP, act_up, "Select the previous file (in details or manifest: scroll)") \
	X(REQ_PAGE_DOWN, "page-down", KEY_NPAGE, ' ', act_page_down, "A page down in the focused pane (files, details, manifest)") \
	X(REQ_PAGE_UP, "page-up", KEY_PPAGE, 0, act_page_up, "A page up in the focused pane")    \
	X(REQ_FIRST, "move-first", 'g', KEY_HOME, act_first, "Select the first file (or the focused pane's top)") \
	X(REQ_LAST, "move-last", 'G', KEY_END, act_last, "Select the last file (or the focused pane's end)") \
	X(REQ_ENTER, "enter", '\r', 0, act_enter, "On a file: focus its details (j/k, PgDn, / in them); again: back to the files") \
	X(REQ_FOCUS, "focus", '\t', 0, act_focus, "Switch focus between the files and the manifest") \
	X(REQ_SEARCH, "search", '/', 0, act_search, "Search the focused pane: file names, details or manifest") \
	X(REQ_SEARCH_NEXT, "search-next", 'n', 0, act_search_next, "The search's next match (wraps)") \
	X(REQ_SEARCH_PREV, "search-prev", 'N', 0, act_search_prev, "The search's previous match (wraps)") \
	X(REQ_FILTER, "filter", '|', 0, act_filter, "Show only the files whose name contains TEXT (empty: all)") \
	X(REQ_DETAILS_DOWN, "details-down", 'd', 0, act_details_down, "Scroll the file's details (wraps to the top)") \
	X(REQ_DETAILS_UP, "details-up", 0, 0, act_details_up, "Scroll the file's details back") \
	X(REQ_SELECT, "select", 0, 0, act_select, "Select a file by number or name (:select N|NAME)") \
	X(REQ_MACHINE, "machine", 'm', 0, act_machine, "Assign a machine to the file (Default clears it)") \
	X(REQ_ADD_MACHINE, "add-machine", 'M', 0, act_add_machine, "+ Add machine (\"Machine N\") for the file") \
	X(REQ_RENAME_MACHINE, "rename-machine", 'R', 0, act_rename_machine, "Rename the file's machine everywhere (:rename-machine OLD NEW)") \
	X(REQ_DELETE_MACHINE, "delete-machine", 'D', 0, act_delete_machine, "Delete the file's machine (files go Default)") \
	X(REQ_MERGE_MACHINE, "merge-machine", 'J', 0, act_merge_machine, "Merge the file's machine into another (:merge-machine FROM INTO)") \
	X(REQ_NAME_IDS, "name-id", 'i', 0, act_name_id, "Name an embedded machine id (id=name)") \
	X(REQ_AUTO, "auto", 'a', 0, act_auto, "Align the file automatically (remove its clocks entry)") \
	X(REQ_OFFSET, "offset", 'o', 0, act_offset, "Set a fixed offset (ns us ms s; on a file placed automatically: a move from where it is)") \
	X(REQ_REF, "ref", 'r', 0, act_ref, "Reference for the offset: FILE[:CLOCK][@MACHINE]")    \
	X(REQ_CLOCK, "clock", 'K', 0, act_clock, "The file's own clock for the offset (empty: PIN)") \
	X(REQ_NUDGE_MS_DOWN, "nudge-ms-down", '[', 0, act_nudge_ms_down, "Offset -1 ms")          \
	X(REQ_NUDGE_MS_UP, "nudge-ms-up", ']', 0, act_nudge_ms_up, "Offset +1 ms")                \
	X(REQ_NUDGE_S_DOWN, "nudge-s-down", '{', 0, act_nudge_s_down, "Offset -1 s")              \
	X(REQ_NUDGE_S_UP, "nudge-s-up", '}', 0, act_nudge_s_up, "Offset +1 s")                    \
	X(REQ_NUDGE_US_DOWN, "nudge-us-down", '<', 0, act_nudge_us_down, "Offset -1 us")          \
	X(REQ_NUDGE_US_UP, "nudge-us-up", '>', 0, act_nudge_us_up, "Offset +1 us")                \
	X(REQ_ESTIMATE, "estimate", 'z', 0, act_estimate, "Estimate the file's offset from events both traces saw (one edit)") \
	X(REQ_ESTIMATE_ALL, "estimate-all", 'Z', 0, act_estimate_all, "Estimate every file's offset from events (one edit)") \
	X(REQ_PAIR, "pair", 'p', 0, act_pair, "Pick an event here and the same moment in a reference (:pair F:NAME#N=REF:NAME#N[+D])") \
	X(REQ_SOLVE, "solve", 'S', 0, act_solve, "Solve: a whole configuration as a manifest diff (y applies, n declines)") \
	X(REQ_FIX, "fix", 'f', 0, act_fix, "Apply the file's first proven fix (:fix N another)") \
	X(REQ_OWN_MACHINE, "own-machine", 'H', 0, act_own_machine, "Put the file on a machine of its own (when proven to help)") \
	X(REQ_TRACE_TIME, "trace-time", 't', 0, act_trace_time, "Timeline clock: CLOCK [FILE [MACHINE]]") \
	X(REQ_BASELINE, "baseline", 'b', 0, act_baseline, "Make the file own the timeline (trace_time.file)") \
	X(REQ_ATTR, "attr", 'A', 0, act_attr, "Set an attribute: key=value (empty value removes)") \
	X(REQ_UNDO, "undo", 'u', 0, act_undo, "Undo the last edit")                               \
	X(REQ_REDO, "redo", WB_KEY_CTRL('r'), 'U', act_redo, "Redo")                              \
	X(REQ_COPY, "copy", 'c', 0, act_copy, "Copy the manifest to the clipboard (OSC 52)")      \
	X(REQ_SAVE_MANIFEST, "save-manifest", 'e', 0, act_save_manifest, "Write the manifest JSON to a file") \
	X(REQ_WRITE, "write", 'w', 0, act_write, "Write the merged TAR")                          \
	X(REQ_ADD_FILES, "add-files", 'O', 0, act_add_files, "Add files to the set (globs: *.json; Tab completes)") \
	X(REQ_REMOVE_FILE, "remove-file", 'X', KEY_DC, act_remove_file, "Remove the file from the set (not from disk)") \
	X(REQ_RENAME_FILE, "rename-file", KEY_F(2), 0, act_rename_file, "Rename the file's member name in the TAR (name order decides processing)") \
	X(REQ_MOVE_EARLIER, "move-earlier", KEY_SR, '(', act_move_earlier, "Process the file one place earlier (renames member names: numeric prefixes)") \
	X(REQ_MOVE_LATER, "move-later", KEY_SF, ')', act_move_later, "Process the file one place later (trace_processor's order is priority, then name)") \
	X(REQ_RESCAN, "rescan", 's', 0, act_rescan, "Scan the files again (after a cancel, or when they changed)") \
	X(REQ_EDIT_MANIFEST, "edit-manifest", 'E', 0, act_edit_manifest, "Edit the manifest's JSON in $VISUAL or $EDITOR") \
	X(REQ_CONVERT_MANIFEST, "convert-manifest", 'C', 0, act_convert_manifest, "Convert a manifest in the outdated syntax of older docs") \
	X(REQ_PRINT_ON_EXIT, "print-on-exit", 0, 0, act_print_on_exit, "Print the manifest JSON when the workbench exits") \
	X(REQ_OPEN, "open", 0, 0, act_open, "Open files or an archive (:open PATH...)")          \
	X(REQ_ZOOM_IN, "zoom-in", '+', '=', act_zoom_in, "Zoom the timeline in (at the selected file)")                  \
	X(REQ_ZOOM_OUT, "zoom-out", '-', 0, act_zoom_out, "Zoom the timeline out")                \
	X(REQ_PAN_LEFT, "pan-left", KEY_LEFT, 'h', act_pan_left, "Move the zoomed timeline earlier (in the manifest: scroll left)") \
	X(REQ_PAN_RIGHT, "pan-right", KEY_RIGHT, 'l', act_pan_right, "Move the zoomed timeline later (in the manifest: scroll right)") \
	X(REQ_CANCEL_SCAN, "cancel-scan", 'x', 0, act_cancel_scan, "Cancel the background scan")  \
	X(REQ_EVENTS, "events", 'v', 0, act_events, "The merged trace's events in timeline order, kept or dropped (with the stat)") \
	X(REQ_TRACKS, "tracks", 'T', 0, act_tracks, "The merged trace's tracks: slices, instants and drops at any zoom") \
	X(REQ_EVENT_SEARCH, "event-search", 0, 0, act_event_search, "Search the events by name (in the events view: /, then n, N)") \
	X(REQ_EVENT_FILTER, "event-filter", 0, 0, act_event_filter, "Filter the events: NAME file=F machine=N dropped (empty: all)") \
	X(REQ_REPORT, "report", 0, 0, act_report, "Write the report to a file (:report FILE): FILE.json as check --json, FILE.md markdown, else text") \
	X(REQ_HELP, "help", '?', KEY_F(1), act_help, "Show this help")                                 \
	X(REQ_MESSAGES, "messages", 'L', 0, act_messages, "Show every message of this session in full") \
	X(REQ_PROMPT, "prompt", ':', 0, act_prompt, "Open the command prompt")                    \
	X(REQ_SET, "set", 0, 0, act_config, "Change a setting (:set KEY = VALUE)")                \
	X(REQ_COLOR, "color", 0, 0, act_config, "Colour a style role (:color ROLE FG BG [ATTR])") \
	X(REQ_BIND, "bind", 0, 0, act_config, "Bind a key (:bind generic KEY REQUEST)")           \
	X(REQ_SOURCE, "source", 0, 0, act_config, "Read a config file (:source FILE)")            \
	X(REQ_THEME, "theme", 0, 0, act_config, "Load a theme (:theme NAME|FILE)")                \
	X(REQ_MOUSE, "mouse", KEY_F(9), 0, act_mouse, "Mouse on/off: a click selects and focuses, the wheel scrolls (off: select text)") \
	X(REQ_REDRAW, "redraw", WB_KEY_CTRL('l'), 0, act_redraw, "Redraw the screen")             \
	X(REQ_QUIT, "quit", 'q', KEY_F(10), act_quit, "Quit (asks when edits are unsaved)")               \
	X(REQ_QUIT_NOW, "quit-now", 'Q', 0, act_quit_now, "Quit without asking")

enum wb_request {
	REQ_NONE = 0,
#define WB_X_(id, name, k1, k2, fn, help) id,
	WB_REQ_LIST(WB_X_)
#undef WB_X_
	REQ__COUNT
};

/* ==== style roles ==== */
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

/* ==== the model ==== */
/* An undo step: the manifest and the set of inputs it belongs to (a
 * rename or reorder changes member names: undo opens the old set again). */
struct wb_undo {
	struct tm_manifest man;
	char **paths;
	size_t n_paths;
};
struct wb_stack {
	struct wb_undo *v;
	size_t n, cap;
};

#define WB_LOG_MAX 200 /* messages kept for :messages */

/* Per-event details of one report file, as the details pane shows them:
 * how many of its events the list says are dropped, and the first few. */
#define WB_DETAIL_FIRST 3
struct wb_file_details {
	uint64_t n_dropped;
	size_t n_first;
	struct wb_dropped_event {
		char *name;      /* NULL: none */
		int64_t ts;      /* trace time; the raw timestamp when not converted */
		const char *why; /* the stat (static) */
	} first[WB_DETAIL_FIRST];
};

struct wb_model {
	/* inputs */
	char **paths; /* trace inputs given to the session */
	size_t n_paths;
	char *demo_dir;
	struct tm_session *s;
	struct tm_pack_check pack; /* util merge's name rules for s's members (tm_pack_check) */
	char *open_error;
	/* model_open lists on a thread and calls this every few ms meanwhile;
	 * true cancels the opening (the engine's cancel flag). */
	bool (*open_poll)(void *ud);
	void *open_poll_ud;
	/* While model_open's listing runs (open_poll draws from it): the
	 * engine's listing, its last snapshot (model_open_refresh), the inputs
	 * being opened, and a count of openings (a new one starts afresh). */
	struct tm_listing *opening;
	struct tm_listing_snap open_snap;
	char *const *open_paths;
	size_t open_n_paths;
	unsigned open_gen;

	/* manifest and history */
	struct tm_manifest man;
	struct tm_manifest saved; /* last written/saved; for "unsaved edits" */
	char **saved_paths;       /* the set of inputs then (model_mark_saved) */
	size_t n_saved_paths;
	struct wb_stack undo, redo;
	unsigned next_machine_n; /* "Machine N": counts up, never reused */
	char **extra_machines;   /* registry names not (yet) used by any file */
	size_t n_extra_machines;
	char *baseline; /* the file offsets default to (the dialog's baseline) */
	char *link_dir; /* renamed inputs: links named as their members, one
			 * folder per renaming (kept until exit: undo may
			 * open an older set again) */
	unsigned link_gen;
	/* The archive's manifest when it does not parse: kept as text (shown,
	 * written as is, edited in $EDITOR, converted on request), never
	 * replaced by an empty one; evaluation then uses the archive's own. */
	bool man_broken;
	bool hint_pending; /* man_err's outdated-syntax hint waits for the scan */
	bool man_text_edited;
	char *man_text;
	struct tm_error man_err;

	/* evaluation */
	struct tm_report *rep;
	char *eval_error;
	/* the timeline's data, once per evaluation (drawing never loops over
	 * events): the whole range, dropped events included, and per report
	 * file where its dropped events would have landed before zero */
	struct wb_tl_data {
		int64_t lo, hi;
		struct wb_drop_range {
			bool has;
			int64_t lo, hi;
		} *drop; /* rep->n_files */
		/* member -> its rep->files index (SIZE_MAX: none), so that a row's
		 * file is found without a loop over the files per row */
		size_t *file_of;
		size_t n_file_of;
	} tl;

	/* Per-event details (sessions that keep them: inputs under 16 MiB).
	 * An edit's numbers come from the fast path at once (rep); the list
	 * of events is computed after it on a thread of its own, for that
	 * evaluation only: the next evaluation cancels it (cancel), and what
	 * a cancelled thread found is never shown. */
	struct wb_details {
		pthread_t thr;
		bool running;          /* thr computes, to be joined (details_join) */
		/* set (by this thread, read by the worker): the thread's
		 * evaluation stops, and what it found is not the current
		 * evaluation's (a later one superseded it, or the session is
		 * about to change) */
		volatile bool cancel;
		int done;              /* __atomic: the thread has finished */
		struct tm_manifest man; /* its copy of the manifest */
		bool man_none;         /* evaluates the input's own manifest */
		struct tm_report *out; /* the thread's, until joined */
		enum tm_status st;
		char *werr;
		bool hold;             /* harness (:details hold): none started */
		/* harness (:details stall, __atomic): a started thread waits
		 * before it evaluates, until :details go */
		int stall;
		/* harness (:details count): threads started, ended cancelled
		 * (the evaluation stopped), finished but not the current
		 * evaluation's (discarded), shown */
		unsigned n_started, n_cancelled, n_discarded, n_shown;
		/* the current evaluation's details, once in */
		bool ready;
		char *error;           /* they could not be computed: why */
		struct wb_file_details *files; /* rep->n_files */
		size_t n_files;
		/* The events and tracks views (wb_browse.c) want every event,
		 * not the dropped ones only: the thread lists them all and
		 * builds the engine's view over them (want_all as it started:
		 * run_all); once in, full and view are the current
		 * evaluation's. */
		bool want_all, run_all;
		struct tm_view *view_out; /* the thread's, until joined */
		struct tm_report *full;
		struct tm_view *view;
		unsigned view_gen; /* counts the views installed (never 0) */
	} det;

	/* background scan */
	pthread_t worker;
	bool worker_running;
	volatile bool cancel;
	volatile int scan_finished; /* set by the worker when done */
	bool scan_cancelled;
	bool scanned;

	/* messages: the current one and the log */
	char msg[1024];
	enum wb_role msg_role;
	char *log[WB_LOG_MAX];
	size_t n_log;

	/* alignment (wb_align.c): the fixes the engine proved for the current
	 * manifest, found when shown (model_fixes_ensure: the files in
	 * fixes_done), the evidence of the last estimate per file, and a
	 * solution shown until it is applied or declined */
	struct tm_fixes fixes;
	char **fixes_done;
	size_t n_fixes_done;
	struct wb_evidence {
		char *path, *text;
	} *evidence;
	size_t n_evidence;
	bool has_solution;
	struct tm_solution solution;
	char *solution_diff;

	/* output */
	char *written;    /* path of the last written TAR */
	bool demo_output; /* a TAR or manifest was written into demo_dir: keep it */
	bool print_manifest_on_exit;

	/* the scan cache (tm_session_opts.cache_dir): off with --no-cache or
	 * `set cache = no`; a rescan (s) reads the files and saves anew */
	bool no_cache;
	bool cache_refresh;
	uint64_t cache_max; /* bytes; 0: the engine's default */
	bool copied;

	/* The keys as bound now, by request ("<F2>"; ":rename-file" when no
	 * key is bound), for the texts that name them (set by wb_actions.c
	 * whenever the bindings change). */
	char keys[REQ__COUNT][40];
};

/* ==== panes: geometry (from the layout), selection and scroll ==== */
struct pane {
	int y, x, h, w; /* h counts the pane's rule/header row */
	size_t n;       /* rows (or lines) of content */
	size_t sel;     /* selected row (list panes) */
	size_t top;     /* first row (line) shown */
	size_t left;    /* first column shown (panes that scroll sideways) */
	bool has_sel;
};

enum wb_pane_id { PANE_LIST, PANE_DETAILS, PANE_TIMELINE, PANE_MANIFEST, PANE_HELP, PANE__COUNT };

/* ==== wrapped text ==== */
#define WB_MAX_PARAS 16
struct wb_para {
	char *text; /* escaped (printable) */
	enum wb_role role;
	size_t n_lines;
	size_t *start, *len; /* byte span of each wrapped line */
};
struct wb_paras {
	struct wb_para p[WB_MAX_PARAS];
	struct tm_buf raw[WB_MAX_PARAS]; /* the text as built, before escaping */
	size_t n;
	int width; /* wrapped at */
	int lines; /* total */
};

/* ==== the layout (pure: from sizes and needs to rectangles) ==== */
struct wb_layout_in {
	int rows, cols;
	int n_list;     /* rows in the file list */
	int det_lines;  /* wrapped details lines at left_cols */
	int n_timeline; /* bars */
	int verdict_lines, owner_lines;
	bool focus_manifest;
	bool focus_details;
};
struct wb_rect {
	int y, x, h, w;
};
struct wb_layout {
	bool too_small;
	bool side; /* the manifest on the right (wide screens) */
	int left_cols;
	struct wb_rect list, details, timeline, manifest;
	int verdict_y, verdict_h, owner_h;
	int msg_y, keys_y;
};

/* The file list's columns: what each column's content needs (widest cell,
 * header included) and the widths the layout gives them; numbers are never
 * cut, names and machines give way first. */
struct wb_cols {
	int order, name, format, size, machine, align, events, drops;
	/* 0: no MISSING column (the events missing from the merged trace are
	 * the dropped count, tm_report_missing_is_dropped) */
	int missing;
};
/* The timeline's window over the whole range [lo, hi]: zoom halves the span
 * per step; center (a fraction of the range) is where the view is anchored
 * (the selection when zooming, moved by panning). */
struct wb_tl_in {
	int64_t lo, hi;
	int zoom;
	double center;
	int bar_w; /* time columns */
};
struct wb_tl_view {
	double v0, span;    /* the window: [v0, v0 + span) over bar_w columns */
	int zero_col;       /* the column before which zero is drawn (may be outside) */
	double center;      /* the center actually used (clamped) */
	double lo, full;    /* the whole range (with room for zero) */
};

/* ==== the frame: what view_draw draws (prepared by wb_frame.c) ==== */
struct wb_frame {
	struct wb_layout lay;
	struct wb_cols cols;  /* the file list's column widths */
	size_t *ord;          /* per model row: its place in trace_processor's
			       * processing order among the rows (1-based; 0: never) */
	size_t cap_ord;
	struct wb_tl_view tl; /* the timeline's window */
	int tl_bar_w;         /* its time columns (the zero marker takes one more) */
	int tl_name_w;        /* its name column */
	struct wb_paras verdict, owner, details;
	bool details_name; /* the details start with the name in full */
	struct tm_buf manifest_json;
	size_t manifest_lines;
	char details_label[600];
	char timeline_label[600];
	char manifest_label[160];
	char hints[512];
	/* Drawn where a verdict, owner block or message is cut on screen: the
	 * key that shows them in full (never a bare '~'). */
	char cut_hint[64];
	char prompt[2048];
	int prompt_cursor;
	/* the help screen: one line per request, then notes (or the log) */
	char help_title[128];
	int help_width; /* help lines wrap at it (continuation lines indented) */
	bool help_escaped; /* the lines are escaped already (the log) */
	char **help;
	enum wb_role *help_role;
	size_t n_help;
};

/* ==== the whole workbench ==== */
enum wb_confirm {
	CONFIRM_NONE,
	CONFIRM_QUIT,
	CONFIRM_OVERWRITE,
	CONFIRM_RESTORE,
	CONFIRM_PRINT_ON_EXIT,
	CONFIRM_SOLVE,
};

/* The pair picker (p): the file's events, then the reference's, each
 * searchable by name, shown on the help screen. */
struct wb_picker {
	bool on;
	int step; /* 0: an event of file, 1: one of ref */
	char *file, *ref;
	struct tm_align_events ev;
	char filter[128];
	/* the events the filter shows (indexes into ev), rebuilt when the
	 * filter (shown_for) or the events change, not per frame */
	uint32_t *shown;
	size_t n_shown, cap_shown;
	char shown_for[128];
	bool shown_ok;
	unsigned n_filtered; /* times it was rebuilt (:help count) */
	size_t sel;   /* among the events the filter shows */
	size_t top;   /* the first of them on screen (wb_frame: only those are formatted) */
	char *a_name; /* the file's event, once picked */
	uint32_t a_occ;
	bool chosen; /* both picked: the prompt asks for d */
	char *b_name;
	uint32_t b_occ;
};

struct wb_ui {
	struct pane pane[PANE__COUNT];
	bool focus_manifest;
	bool focus_details; /* the details pane has the focus (never both) */
	size_t det_row; /* the model row the details scroll belongs to */
	/* The file list through its filter: the list pane's lines are
	 * shown[0..n) (model rows); no filter: every row, shown unused. */
	char *filter;
	size_t *shown;
	size_t shown_cap;
	bool shown_on; /* shown holds the lines (set by list_refresh) */
	char *search; /* the last search (n, N repeat it) */
	enum wb_pane_id search_pane; /* where it ran: its matches are marked there */
	bool help;
	bool messages; /* the help screen shows the message log instead */
	int zoom;
	bool mouse; /* clicks and the wheel are ours (wb_main.c applies it) */
	double tl_center; /* the timeline's anchor, a fraction of its range */
	bool ascii;
	bool mono;
	/* prompt: which request (or confirmation) it answers */
	bool prompting;
	bool answering; /* a handler runs with its prompt's answer */
	bool redraw_all; /* the next frame repaints the whole terminal */
	enum wb_request prompt_req;
	enum wb_confirm confirm;
	char *pending_write; /* path awaiting overwrite confirmation */
	enum wb_request pending_req; /* what writes it: REQ_WRITE or REQ_SAVE_MANIFEST */
	bool solve_view;     /* the help screen shows the solution */
	struct wb_picker picker;
	/* The events list and the tracks view (wb_browse.c), over the
	 * engine's view of the current evaluation (model_view). */
	struct wb_browse {
		bool on;
		bool tracks;     /* the tracks view; else the events list */
		size_t ev;       /* the selected event (report index), SIZE_MAX none */
		/* the events list through its filter: positions in timeline
		 * order, recomputed when the view or the filter changes */
		uint32_t *shown;
		size_t n_shown, cap_shown;
		/* the view they were computed for (model_view's gen: a
		 * freed view's address may be the next one's) */
		unsigned shown_gen;
		bool filter_on;
		struct tm_event_filter filt;
		char filt_name[128];
		char filt_text[256];
		char search[128];
		size_t top;      /* first line shown */
		/* tracks: the window [t0, t0 + span), the selected row, the
		 * first row shown, the files folded (by report file index) */
		int64_t t0, span;
		bool fitted;
		size_t trow, ttop;
		bool *folded;
		size_t n_folded;
		/* the processes folded (browse_proc_key) */
		uint64_t *pfold;
		size_t n_pfold, cap_pfold;
		/* the tracks view's rows, built when the view or a fold
		 * changes (browse_refresh), not per frame: for view rows_gen */
		struct wb_trow *rows;
		size_t n_rows;
		unsigned rows_gen;
	} browse;
	/* The opening screen (drawn while model_open lists): its selection
	 * and first row shown among the members found so far, whether it
	 * follows the newest, its help, when the opening began and was last
	 * drawn (ms), and a note for a key that has to wait for the end. */
	struct wb_opening {
		unsigned gen; /* m->open_gen it belongs to */
		size_t sel, top;
		bool follow, help;
		long t0_ms, drawn_ms;
		const char *note;
	} opening;
};

struct wb_run {
	bool headless;
	FILE *script;
	int script_line;
	bool quit;
	int exit_status;
	FILE *tty_out; /* where OSC 52 goes (NULL in headless mode) */
	FILE *null_in, *null_out;
	/* recovery (wb_out.c): the key of the inputs the session started
	 * with, those inputs, when it started; the files offered at the
	 * start (newest first) and the next one to offer; the file whose
	 * edits it restored (removed once they are saved or superseded) */
	char *recovery_key;
	char **rec_start;
	size_t n_rec_start;
	long long rec_t0;
	char **rec_offers;
	size_t n_rec_offers, rec_offer;
	char *recovery_restored;
	char *recovery_saved; /* where the recovery manifest was written, or NULL */
	char *recovery_err;   /* why it could not be written anywhere */
	const char *theme_name;
	void (*redraw)(struct wb *wb); /* draw now (progress, readline) */
};

struct wb {
	struct wb_model m;
	struct wb_ui ui;
	struct wb_frame fr;
	struct wb_run run;
};

extern volatile sig_atomic_t wb_got_signal;

/* ==== wb_model.c ==== */
void model_init(struct wb_model *m);
void model_fini(struct wb_model *m);
void model_set_msg(struct wb_model *m, enum wb_role role, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
size_t model_n_rows(const struct wb_model *m);
/* Session member index of list row i. */
size_t model_row_member(const struct wb_model *m, size_t row);
/* The report's file for list row i, or NULL. */
const struct tm_report_file *model_row_file(const struct wb_model *m, size_t row);
/* Display name of a member: its archive path, else the base name of the input (borrowed). */
const char *model_member_name(const struct wb_model *m, size_t member);
/* what the list shows: the name, or the engine's label for a member named ""
 * (tmp holds it; *len is its length, which a GNU long name's NUL does not end) */
const char *model_member_label(const struct wb_model *m, size_t member, struct tm_buf *tmp,
			       size_t *len);
const char *model_row_name(const struct wb_model *m, size_t row);
/* The list row of a member name, or SIZE_MAX. */
size_t model_row_of(const struct wb_model *m, const char *name);
/* The manifest's entry for a path, or NULL (borrowed until the next edit). */
const struct tm_manifest_file *model_manifest_file(const struct wb_model *m, const char *path);
/* Does path own the timeline in the current report? */
bool model_owns_timeline(const struct wb_model *m, const char *path);
/* The reference of an offset on the owner moves by -offset: true unless it
 * has a clocks entry of its own (then that entry places it). */
bool model_ref_follows(const struct wb_model *m, const char *ref);
/* What an offset off on path against ref does, in words: "moves later", or,
 * when path owns the timeline, "... stays put; REF moves -1 ms instead". */
void model_offset_effect(const struct wb_model *m, const char *path, int64_t off,
			 const char *ref, char *buf, size_t len);
void model_evaluate(struct wb_model *m);
/* Open inputs (a loose manifest among several goes into the editor) and
 * start the background scan; on failure m->open_error says why. */
void model_open(struct wb_model *m, char **paths, size_t n);
/* While an opening runs (open_poll): bring m->open_snap up to date; true
 * when it changed.  And its rows (members but the top-level input, as the
 * list shows them once open). */
bool model_open_refresh(struct wb_model *m);
size_t model_open_rows(const struct wb_model *m);
/* The snapshot's member i as the list will show it (model_member_label):
 * its name, or for a member named "" the engine's label form,
 * "" (inflated NAME); appended to out. */
void model_open_label(const struct wb_model *m, size_t i, struct tm_buf *out);
/* A scan cache setting (`set cache = yes|no`, `set cache-max-mib = N`):
 * false when key is not one; *err set when val is not valid for it. */
bool model_cache_setting(const char *key, const char *val, bool *no_cache, uint64_t *max,
			 const char **err);
/* Has the scan finished since the last call?  (Then the report is fresh.) */
bool model_scan_poll(struct wb_model *m);
void model_scan_cancel(struct wb_model *m);
bool model_is_idle(const struct wb_model *m);
/* Per-event details: join a finished thread (its result shown when it is
 * the current evaluation's), start one for the current evaluation when
 * none runs.  True when what the screen shows changed. */
bool model_details_poll(struct wb_model *m);
/* Whether the details are being computed (or waiting to be). */
bool model_details_busy(const struct wb_model *m);
/* File i of the report's details, NULL while they are computed or when
 * the session keeps none (model_details_kept). */
const struct wb_file_details *model_file_details(const struct wb_model *m, size_t file);
bool model_details_kept(const struct wb_model *m);
/* The events and tracks views are open: the details list every event and
 * the engine's view over them is built (on the details thread). */
void model_details_want_all(struct wb_model *m, bool on);
/* That view and the report it indexes (*full), once in; NULL meanwhile.
 * model_view_gen: which view it is (a new view, a new number; 0 none). */
const struct tm_view *model_view(const struct wb_model *m, const struct tm_report **full);
unsigned model_view_gen(const struct wb_model *m);
/* Harness: hold (no thread started: the computing state stays) or go. */
void model_details_hold(struct wb_model *m, bool hold);
/* Harness: the next thread started waits before it evaluates (not busy
 * meanwhile), until model_details_hold(m, false). */
void model_details_stall(struct wb_model *m);
/* Why a row cannot be a TAR member as it is (util merge's rules), or NULL;
 * caller frees.  And how many rows have such a problem. */
char *model_member_problem(const struct wb_model *m, size_t row);
size_t model_n_problems(const struct wb_model *m);
/* Files managed (loose inputs): the session is opened again on the new
 * set; the manifest follows renames and removals. */
void model_rescan(struct wb_model *m);
void model_remove_row(struct wb_model *m, size_t row);
void model_rename_row(struct wb_model *m, size_t row, const char *name);
/* Move a loose file one place earlier (dir < 0) or later in trace_processor's
 * processing order: numeric prefixes on the member names of its kind, in one
 * reopen, one undo step; where the order cannot change, the message says
 * why.  And the file behind a renamed member (its path on disk, in buf), or
 * NULL when the member has its file's own name. */
void model_move_row(struct wb_model *m, size_t row, int dir);
const char *model_row_renamed_from(const struct wb_model *m, size_t row, char *buf, size_t len);
/* The key bound to r as texts name it (m->keys). */
const char *model_key(const struct wb_model *m, enum wb_request r);
void model_add_paths(struct wb_model *m, char **paths, size_t n);
void model_fini_links(struct wb_model *m);
/* Is path one of the inputs (the same name or the same file)? */
/* Note a written output (TAR or manifest): inside the demo dir it is kept. */
void model_note_output(struct wb_model *m, const char *path);
/* Edits: each builds the next manifest and commits it (undo, evaluate,
 * message). */
void model_commit(struct wb_model *m, struct tm_manifest *next, const char *what);
bool model_is_dirty(const struct wb_model *m);
/* What is now is saved (opened, or e / w wrote it): the manifest and the
 * set of inputs. */
void model_mark_saved(struct wb_model *m);
void model_undo(struct wb_model *m, bool undo);
void model_set_offset(struct wb_model *m, const char *path, int64_t off, const char *what);
void model_nudge(struct wb_model *m, const char *path, int64_t delta);
void model_rename_machine(struct wb_model *m, const char *from, const char *to, const char *what);
/* Every machine name known to the editor (manifest names plus added ones). */
size_t model_machine_names(const struct wb_model *m, char ***out);
void model_free_names(char **v, size_t n);
void model_set_machine(struct wb_model *m, const char *path, const char *name);
/* Assign a new "Machine N"; returns its name (caller frees) or NULL. */
char *model_add_machine(struct wb_model *m, const char *path);
void model_name_id(struct wb_model *m, const char *path, const char *spec);
void model_align_auto(struct wb_model *m, const char *path);
void model_set_ref(struct wb_model *m, const char *path, const char *spec);
void model_set_own_clock(struct wb_model *m, const char *path, const char *name);
void model_set_trace_time(struct wb_model *m, const char *spec);
void model_set_attr(struct wb_model *m, const char *spec);
bool model_restore(struct wb_model *m, const char *path);
/* What the recovery file at path changes against now, in a few words (the
 * files whose entries differ, trace time, the set of files); NULL when it
 * cannot be read.  Caller frees. */
char *model_recovery_summary(const struct wb_model *m, const char *path);
/* The inputs file beside a recovery file ("x.json" -> "x.inputs"). */
void model_recovery_inputs_path(const char *path, char *out, size_t len);
/* New manifest text (edited or converted): parsed, it replaces the manifest
 * (and a broken one); not parsed, it is kept as the broken text. */
bool model_set_manifest_text(struct wb_model *m, const char *text, size_t len, const char *what);
/* The manifest as written: the broken text, or the emitted JSON. */
void model_manifest_json(const struct wb_model *m, struct tm_buf *out);

/* What one evaluation leaves (wb_model.c): the proven fixes for the current
 * manifest (refreshed after each evaluation), and everything wb_align.c
 * keeps for the session (fixes, evidence, a solution not yet applied). */
void model_fixes_refresh(struct wb_model *m);
/* The proven fixes of path under the current manifest, found now unless
 * they already were (each candidate is a replay: only the file shown or
 * asked for pays for it). */
void model_fixes_ensure(struct wb_model *m, const char *path);
void model_solution_drop(struct wb_model *m);
void model_align_fini(struct wb_model *m);

/* ==== wb_align.c (the model's alignment edits) ==== */
/* The k-th (0-based) proven fix for path, or NULL. */
const struct tm_fix *model_fix(const struct wb_model *m, const char *path, size_t k);
void model_apply_fix(struct wb_model *m, const char *path, size_t k);
/* The evidence of the last estimate or pair for path (ours), or NULL. */
const char *model_evidence(const struct wb_model *m, const char *path);
/* Offsets from events for path (NULL: every file), one undoable edit. */
void model_estimate(struct wb_model *m, const char *path);
/* A declared pair (p->file's event at the same moment as p->ref's, or
 * delta_ns before it): the offset it gives, one undoable edit. */
void model_pair(struct wb_model *m, const struct tm_align_pair *p);
/* Solve: the engine's whole configuration kept in m->solution (true) until
 * model_solve_answer applies it (one undoable edit) or declines it. */
bool model_solve(struct wb_model *m);
void model_solve_answer(struct wb_model *m, bool apply);
/* The engine's offer of a machine of its own for path, applied when it
 * helps; otherwise the message says why not. */
void model_own_machine(struct wb_model *m, const char *path);

/* ==== wb_theme.c ==== */
/* Returns true when monochrome (NO_COLOR or no colours). */
bool theme_init(void);
int theme_attr(enum wb_role role);
const char *theme_role_name(enum wb_role r);
/* "color ROLE FG BG [ATTR...]" split into words. */
bool theme_color(char **tok, int n, char *err, size_t err_len);
/* The file of a theme name (TM_THEME_DIR, next to the binary, installed),
 * or false; "default" with no file applies the built-in one. */
bool theme_find(const char *name, char *path, size_t len);
void theme_builtin(void);

/* ==== wb_layout.c ==== */
void layout_compute(const struct wb_layout_in *in, struct wb_layout *out);
/* A one-line field total columns wide in width columns with the cursor at
 * column cursor: the first column shown (0: no scroll).  When scrolled, the
 * first column shown is a marker, so the cursor is never at it. */
int layout_hscroll(int total, int cursor, int width);
/* Column widths for a list w columns wide from what the cells need. */
void layout_columns(const struct wb_cols *need, int w, struct wb_cols *out);
/* The columns one row takes besides its cells (marks and separators). */
int layout_columns_extra(void);
void layout_timeline(const struct wb_tl_in *in, struct wb_tl_view *out);
int layout_left_cols(int cols);
/* The opening screen's list rows on a screen rows high (title, header,
 * progress, note, message and key lines take the rest). */
int layout_opening_rows(int rows);
size_t pane_rows(const struct pane *p); /* content rows shown (h minus the rule) */
/* Keep sel within the rows and in view, top within the content. */
void pane_clamp(struct pane *p);
void pane_move(struct pane *p, long delta);
void pane_scroll(struct pane *p, long delta);
/* Where pat occurs in hay[0..len), ASCII case ignored, or NULL (the
 * filter's and the search's one rule). */
const char *pane_find(const char *hay, size_t len, const char *pat);
/* The file list through ui->filter: recompute its lines (the selected
 * model row stays selected while it is shown), the model row of line i
 * (SIZE_MAX past the end), of the selection, and select a model row
 * (false when the filter hides it). */
struct wb_ui;
void list_refresh(struct wb_ui *ui, const struct wb_model *m);
size_t list_row(const struct wb_ui *ui, size_t i);
size_t list_sel_row(const struct wb_ui *ui);
bool list_select_row(struct wb_ui *ui, size_t row);

/* ==== wb_text.c ==== */
/* Escaped copy of s cut to max_cols ("..." marks a cut); caller frees. */
char *text_escape_cols(const char *s, int max_cols);
/* Columns of one UTF-8 character of escaped (printable) text. */
int text_char_cols(const char *p, size_t n);
/* Bytes of the UTF-8 character at p[0..n) (tm_utf8_len); an invalid or
 * cut-off byte counts as one. */
size_t text_utf8_len(const char *p, size_t n);
/* A name cut to about max_len bytes ('~' marks the cut); caller frees. */
char *text_short_name(const char *s, size_t max_len);
void text_fmt_size(uint64_t n, char *buf, size_t len);
void text_fmt_dur(int64_t ns, char *buf, size_t len);
/* Trace time is wall-clock time (the timeline's clock is REALTIME). */
bool text_is_wall_clock(const struct tm_report *r);
/* Under REALTIME, a trace time as the wall clock says it to the
 * nanosecond, "11-14 22:13:20.334000000" (with_date: "2023-11-14
 * 22:13:20.334000000 UTC"); false (buf untouched) otherwise or before 1970. */
bool text_fmt_clock(const struct tm_report *r, int64_t ns, bool with_date, char *buf, size_t len);
/* Under REALTIME the zone of ns ("UTC"), else "". */
void text_clock_zone(const struct tm_report *r, int64_t ns, char *buf, size_t len);
/* "a .. b" in trace time: wall-clock dates and times of day under
 * REALTIME ("2023-11-14 22:13:20.334 .. 22:13:21 UTC"), else offsets. */
void text_fmt_range(const struct tm_report *r, int64_t a, int64_t b, char *buf, size_t len);
/* A window of the timeline, to about a hundredth of its width:
 * "+10.0 .. +30.0 ms", "2023-11-14 22:13:20.33 .. 22:13:21.11 UTC". */
void text_fmt_window(const struct tm_report *r, double a, double b, char *buf, size_t len);
const char *text_machine(const struct wb_model *m, const char *path);
void text_align(const struct wb_model *m, const char *path, char *buf, size_t len);
bool text_is_timeline_file(const struct tm_report_file *rf);
/* Not the manifest, a hidden member or a container. */
bool text_member_is_trace(const struct tm_member *mb);
size_t text_timeline_rows(const struct wb_model *m, size_t *rows, size_t max);
struct tm_buf *text_para_add(struct wb_paras *ps, enum wb_role role);
void text_paras_fini(struct wb_paras *ps);
/* Wrap every paragraph at w columns (sets lines). */
void text_wrap(struct wb_paras *ps, int w);
/* full_name: the list or the rule cuts the name, so the details start with
 * it in full. */
void text_details(const struct wb_model *m, size_t row, struct wb_paras *ps, bool full_name);
void text_verdict(const struct wb_model *m, struct wb_paras *ps);
void text_owner(const struct wb_model *m, struct wb_paras *ps);

/* ==== wb_prompt.c ==== */
enum wb_complete { COMPLETE_WORDS, COMPLETE_FILES, COMPLETE_MACHINES, COMPLETE_REF, COMPLETE_COMMANDS };
enum wb_prompt_result { PROMPT_PENDING, PROMPT_ACCEPTED, PROMPT_CANCELLED };
/* commands: NULL-terminated names for COMPLETE_COMMANDS (borrowed for good). */
void prompt_init(struct wb *wb, const char *const *commands);
void prompt_fini(void);
void prompt_open(struct wb *wb, enum wb_complete kind, const char *label, const char *initial);
void prompt_close(struct wb *wb);
/* Feed one key (byte or KEY_*): ACCEPTED gives the line in *line (caller
 * frees); a one-key y/n question answers "y" or "n". */
enum wb_prompt_result prompt_feed(struct wb *wb, int key, bool yes_no, char **line);
/* The prompt line as displayed and the cursor column within it. */
const char *prompt_line(int *cursor_cols);

/* ==== wb_out.c ==== */
/* Copy the manifest with OSC 52 and say what the path to the clipboard
 * (the terminal, tmux's set-clipboard and passthrough, GNU screen) allows. */
enum out_copy { COPY_ARRIVED, COPY_SENT, COPY_FAILED };
enum out_copy out_copy_manifest(struct wb *wb, char *why, size_t why_len);
/* May path be written (tm_output_check: never an input or a special file)?
 * TM_OK, TM_ERR_EXISTS (ask, then write with replace), or a refusal, said
 * on the message line. */
enum tm_status out_may_write(struct wb *wb, const char *path);
bool out_save_manifest(struct wb *wb, const char *path, bool replace);
/* The current evaluation's report to path: FILE.json as check --json,
 * FILE.md markdown (tm_report_markdown), else check's text with the proven
 * fixes (:report). */
bool out_write_report(struct wb *wb, const char *path, bool replace);
void out_write_tar(struct wb *wb, const char *path, bool replace);
/* Recovery files: the key of the inputs (once, at the start); the files
 * of earlier sessions on them, newest first (run.rec_offers); one removed
 * with its inputs file; this session's edits saved to its own. */
void out_recovery_init(struct wb *wb);
void out_recovery_list(struct wb *wb);
void out_recovery_remove(const char *path);
bool out_save_recovery(struct wb *wb);
void out_exit_message(struct wb *wb);
/* Run $VISUAL / $EDITOR (else vi) on path with the terminal handed over. */
bool out_run_editor(struct wb *wb, const char *path);
/* Standard base64 of data; caller frees. */
char *out_base64(const void *data, size_t len);

/* ==== wb_view.c ==== */
/* wb_view_browse.c: the events list and the tracks view (drawn instead
 * of the panes while ui.browse.on); the tracks view's rows (a file's
 * header, then its tracks unless folded), counted when out is NULL; an
 * exact time in seconds ("-0.005000000"). */
struct wb_trow {
	bool header;    /* a file's or a process's header (no track of its own) */
	bool proc;      /* a process's header: track is its first track */
	uint8_t depth;  /* 0 a file, 1 a process or a track of none, 2 a process's track */
	uint8_t lane;   /* a track's row: the depth of its slices it draws (0 the track's
			 * own row, then one row per deeper level) */
	uint32_t file;
	uint32_t track; /* UINT32_MAX on a file's header */
};
void view_draw_browse(const struct wb *wb);
/* The rows, in the engine's track order (tm_report_tracks_order): a file's
 * header, its tracks of no process, each process's header and, unless
 * folded, its tracks; a track with nested slices a row per depth (v's
 * lanes). */
size_t browse_rows(const struct wb_ui *ui, const struct tm_report *r, const struct tm_view *v,
		   struct wb_trow *out, size_t cap);
/* A process's key in ui.browse.pfold (its file, machine and pid). */
uint64_t browse_proc_key(const struct tm_report_track *t);
/* The rows as of the current view: ui.browse.rows when they are its, else
 * built into *tmp (the caller frees it). */
const struct wb_trow *browse_rows_now(const struct wb *wb, const struct tm_report *r, size_t *n,
				      struct wb_trow **tmp);
void browse_fmt_ts(int64_t ns, char *buf, size_t len);
void view_draw(const struct wb *wb);
/* The opening screen: the members the listing has found so far (the
 * model's open_snap), the progress line, the keys that work meanwhile. */
void view_draw_opening(const struct wb *wb);
/* The screen as text; with roles, then a run-length map of style roles per row. */
bool view_dump_screen(const struct wb *wb, const char *path, bool roles);

/* ==== wb_frame.c ==== */
void frame_prepare(struct wb *wb);
void frame_fini(struct wb_frame *fr);

/* ==== wb_actions.c ==== */
struct wb_request_info {
	enum wb_request req;
	const char *name;
	int key1, key2;
	const char *help;
};
const struct wb_request_info *keymap_info(enum wb_request r);
/* The key now bound to r (user bindings first), 0 if none. */
int keymap_key_of(enum wb_request r);
void keymap_key_name(int key, char *buf, size_t len);
int keymap_parse_key(const char *spec, size_t *used);
void actions_init(struct wb *wb);
/* The events the picker's filter shows, in order (indexes into pk->ev). */
const uint32_t *picker_shown(struct wb_picker *pk, size_t *n);
/* The man page's key list (mdoc), from the action table. */
void actions_print_mdoc(FILE *f);
void actions_key(struct wb *wb, int key);
/* The events list and tracks view as of the current evaluation (before a
 * frame is drawn: wb_act_browse.c). */
void browse_refresh(struct wb *wb);
/* A key while an opening runs: moving, help and redraw work on the opening
 * screen (true: draw it now); anything else waits for the listing's end
 * (a note says so).  And the selection kept within the rows found so far. */
bool actions_opening_key(struct wb *wb, int key);
void actions_opening_clamp(struct wb *wb);
/* A mouse event at a screen cell (wb_main.c decodes the terminal's). */
enum wb_mouse { MOUSE_CLICK, MOUSE_WHEEL_UP, MOUSE_WHEEL_DOWN };
void actions_mouse(struct wb *wb, enum wb_mouse what, int y, int x);
void actions_command(struct wb *wb, const char *line);
/* After model_open (command line or the Open prompt): the row selected on
 * the opening screen kept, an open error shown. */
void actions_opened(struct wb *wb);
void actions_offer_recovery(struct wb *wb);
/* Config files: one rc syntax (set, color, bind, source, theme). */
bool actions_config_line(struct wb *wb, const char *line, char *err, size_t err_len);
bool actions_config_file(struct wb *wb, const char *path, bool quiet);
bool actions_load_theme(struct wb *wb, const char *name);

#endif
