/* SPDX-License-Identifier: MIT */
/*
 * The actions on files and outputs: copy, save the manifest, write the
 * TAR, add, remove, rename, reorder and rescan files, edit or convert the
 * manifest's text, open inputs.  Handlers of the one action table
 * (wb_actions.c).
 */
#include <curses.h>
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wb.h"
#include "wb_act.h"

/* ---- output ---- */

void
act_copy(struct wb *wb, const char *arg)
{
	char why[300], q[400];

	(void)arg;
	/* A copy that cannot arrive: the reason and its fix, and the fallback
	 * offered at once. */
	if (out_copy_manifest(wb, why, sizeof why) == COPY_FAILED &&
	    !wb->m.print_manifest_on_exit) {
		snprintf(q, sizeof q, "Not copied: %s. Print the manifest when you quit? (y/n) ",
			 why[0] ? why : "see :messages");
		confirm(wb, CONFIRM_PRINT_ON_EXIT, q);
	}
}

/* Write path now, or ask first when it would replace a file (the one
 * rule, tm_output: inputs and special files are refused outright). */
static void
write_or_ask(struct wb *wb, enum wb_request req, const char *path)
{
	enum tm_status st = out_may_write(wb, path);

	if (st == TM_ERR_EXISTS) {
		free(wb->ui.pending_write);
		wb->ui.pending_write = strdup(path);
		wb->ui.pending_req = req;
		char q[320], sh[200];
		/* the name the user typed, short: its mode is kept (tm_output) */
		snprintf(q, sizeof q, "%s exists. Replace it (its mode kept)? (y/n) ",
			 tm_shorten(tm_path_base(path), 60, sh, sizeof sh));
		confirm(wb, CONFIRM_OVERWRITE, q);
	} else if (st == TM_OK && req == REQ_WRITE) {
		out_write_tar(wb, path, false);
	} else if (st == TM_OK && req == REQ_REPORT) {
		out_write_report(wb, path, false);
	} else if (st == TM_OK) {
		out_save_manifest(wb, path, false);
	}
}

void
act_save_manifest(struct wb *wb, const char *arg)
{
	if (wants_prompt(wb, arg))
		ask(wb, REQ_SAVE_MANIFEST, COMPLETE_FILES, "Save manifest to: ",
		    "perfetto_manifest.json");
	else
		write_or_ask(wb, REQ_SAVE_MANIFEST, *arg ? arg : "perfetto_manifest.json");
}

void
act_report(struct wb *wb, const char *arg)
{
	if (!wb->m.s)
		return;
	if (wants_prompt(wb, arg)) {
		ask(wb, REQ_REPORT, COMPLETE_FILES, "Write the report to (.json, .md, else text): ",
		    "report.md");
		return;
	}
	write_or_ask(wb, REQ_REPORT, *arg ? arg : "report.md");
}

void
act_write(struct wb *wb, const char *arg)
{
	if (!wb->m.s)
		return;
	if (wants_prompt(wb, arg)) {
		ask(wb, REQ_WRITE, COMPLETE_FILES, "Write merged TAR to: ", "merged.tar");
		return;
	}
	write_or_ask(wb, REQ_WRITE, *arg ? arg : "merged.tar");
}

/* The words of arg, each glob expanded (~ too) in glob's order: the open
 * prompt and O take the same.  A pattern that matches nothing is an error
 * (said, NULL returned); with keep, a word that matches nothing is kept as
 * typed (the open's own error names it). */
static char **
expand_words(struct wb *wb, const char *arg, bool keep, size_t *n_out)
{
	char *copy = strdup(arg), *save = NULL;
	char **words = NULL;
	size_t n = 0;
	glob_t g;

	for (char *w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		memset(&g, 0, sizeof g);
		if (glob(w, GLOB_TILDE | (keep ? GLOB_NOCHECK : 0), NULL, &g) != 0 ||
		    g.gl_pathc == 0) {
			model_set_msg(&wb->m, ROLE_ERROR, "No file matches %s", w);
			globfree(&g);
			for (size_t i = 0; i < n; i++)
				free(words[i]);
			free(words);
			free(copy);
			*n_out = 0;
			return NULL;
		}
		for (size_t i = 0; i < g.gl_pathc; i++) {
			words = realloc(words, (n + 1) * sizeof *words);
			if (!words)
				abort();
			words[n++] = strdup(g.gl_pathv[i]);
		}
		globfree(&g);
	}
	free(copy);
	*n_out = n;
	return words;
}

static void
free_words(char **words, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(words[i]);
	free(words);
}

void
act_add_files(struct wb *wb, const char *arg)
{
	size_t n = 0;
	char **words;

	if (wants_prompt(wb, arg)) {
		ask(wb, REQ_ADD_FILES, COMPLETE_FILES, "Add files (globs: *.json): ", "");
		return;
	}
	words = expand_words(wb, arg, false, &n);
	if (n)
		model_add_paths(&wb->m, words, n);
	free_words(words, n);
}

void
act_remove_file(struct wb *wb, const char *arg)
{
	(void)arg;
	if (sel_path(wb))
		model_remove_row(&wb->m, sel_row(wb));
}

void
act_rename_file(struct wb *wb, const char *arg)
{
	const char *path = sel_path(wb);

	if (!path)
		return;
	if (wants_prompt(wb, arg))
		ask(wb, REQ_RENAME_FILE, COMPLETE_WORDS,
		    "Member name in the TAR (trace_processor processes by name): ", path);
	else
		model_rename_row(&wb->m, sel_row(wb), arg);
}

static void
move_file(struct wb *wb, int dir)
{
	size_t row = sel_row(wb);

	if (!sel_path(wb))
		return;
	model_move_row(&wb->m, row, dir);
	list_select_row(&wb->ui, row); /* the file stays selected */
}

void
act_move_earlier(struct wb *wb, const char *arg)
{
	(void)arg;
	move_file(wb, -1);
}

void
act_move_later(struct wb *wb, const char *arg)
{
	(void)arg;
	move_file(wb, 1);
}

void
act_rescan(struct wb *wb, const char *arg)
{
	(void)arg;
	if (wb->m.s || wb->m.n_paths)
		model_rescan(&wb->m);
}

void
act_edit_manifest(struct wb *wb, const char *arg)
{
	const char *tmpdir = getenv("TMPDIR");
	char path[PATH_MAX];
	struct tm_buf json;
	FILE *f;
	int fd;

	(void)arg;
	snprintf(path, sizeof path, "%s/tracemerge-manifest-XXXXXX.json",
		 tmpdir && *tmpdir ? tmpdir : "/tmp");
	fd = mkstemps(path, 5);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		model_set_msg(&wb->m, ROLE_ERROR, "Cannot create a temp file: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	tm_buf_init(&json);
	model_manifest_json(&wb->m, &json);
	fwrite(json.data ? json.data : "", 1, json.len, f);
	fclose(f);
	tm_buf_fini(&json);
	if (out_run_editor(wb, path)) {
		size_t len = 0;
		struct tm_error err;
		char *text = tm_read_file(path, 64u << 20, false, &len, &err);
		if (text)
			model_set_manifest_text(&wb->m, text, len, "Edited manifest");
		else
			model_set_msg(&wb->m, ROLE_ERROR, "The edited manifest was not read: %s",
				      err.msg);
		free(text);
	}
	unlink(path);
}

void
act_convert_manifest(struct wb *wb, const char *arg)
{
	struct tm_buf out;
	struct tm_error err;
	const char *text = wb->m.man_text;

	(void)arg;
	if (!wb->m.man_broken || !text) {
		msg(wb, ROLE_DIM, "The manifest parses: nothing to convert");
		return;
	}
	if (wb->m.worker_running) {
		/* the conversion reads the scans (the files' clocks): not while
		 * the background scan runs */
		msg(wb, ROLE_WARNING, "The files are still being scanned: convert once the scan is done");
		return;
	}
	struct tm_buf notes;
	tm_buf_init(&out);
	tm_buf_init(&notes);
	tm_error_clear(&err);
	if (!wb->m.s || tm_session_convert_outdated(wb->m.s, text, strlen(text), &out, &notes,
						    &err) != TM_OK) {
		model_set_msg(&wb->m, ROLE_ERROR, "Not converted: %s%s%s", err.msg,
			      notes.len ? " " : "", notes.len ? notes.data : "");
	} else if (model_set_manifest_text(&wb->m, out.data, out.len,
					   "Converted the outdated syntax") && notes.len) {
		/* what could not be said in the valid form, after the news */
		model_set_msg(&wb->m, ROLE_WARNING, "Converted the outdated syntax, except: %s",
			      notes.data);
	}
	tm_buf_fini(&out);
	tm_buf_fini(&notes);
}

void
act_print_on_exit(struct wb *wb, const char *arg)
{
	(void)arg;
	wb->m.print_manifest_on_exit = true;
	msg(wb, ROLE_INFO, "The manifest will be printed on exit");
}

void
act_open(struct wb *wb, const char *arg)
{
	char **words;
	size_t n = 0;

	if (wants_prompt(wb, arg)) {
		ask(wb, REQ_OPEN, COMPLETE_FILES, "Open (files or archive; globs: *.json): ", "");
		return;
	}
	if (wb->m.s) {
		msg(wb, ROLE_WARNING, "Files are open already");
		return;
	}
	if (!arg[strspn(arg, " \t")]) {
		wb->run.quit = true;
		return;
	}
	words = expand_words(wb, arg, true, &n);
	if (n) {
		model_open(&wb->m, words, n);
		actions_opened(wb);
	}
	free_words(words, n);
}

void
actions_opened(struct wb *wb)
{
	/* A row moved to while it opened stays selected: the opening
	 * screen's rows are the list's, member for member. */
	if (wb->ui.opening.gen && wb->ui.opening.gen == wb->m.open_gen && !wb->ui.opening.follow &&
	    !wb->ui.filter)
		wb->ui.pane[PANE_LIST].sel = wb->ui.opening.sel;
	if (wb->m.open_error)
		model_set_msg(&wb->m, ROLE_ERROR, "%s", wb->m.open_error);
}

