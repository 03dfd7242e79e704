/* SPDX-License-Identifier: MIT */
/*
 * Text fields through readline's callback interface, inside the ncurses
 * screen: we own the terminal (prep/deprep NULL, no signal or SIGWINCH
 * handling by readline), feed it one byte at a time from our loop through
 * rl_getc_function, and draw its line ourselves (rl_redisplay_function), so
 * the screen keeps updating while a prompt is open.  Curses keys are turned
 * into the escape sequences readline binds.  Completion offers member names,
 * machine names, clock names and (for paths) file names.  History is kept in
 * memory, and in $XDG_DATA_HOME/tracemerge/history outside headless mode.
 */
#include <curses.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <readline/history.h>
#include <readline/readline.h>

#include "wb.h"

static struct wb *g_wb;
static unsigned char pend[64];
static size_t pend_len, pend_pos;
static enum wb_prompt_kind cur_kind;
static char *cur_label;
static char *done_line;
static bool done;
static char *init_text;
static char history_path[PATH_MAX];
static FILE *rl_null;
static struct tm_buf disp;

static int
my_getc(FILE *f)
{
	(void)f;
	if (pend_pos < pend_len)
		return pend[pend_pos++];
	return EOF;
}

static int
my_input_available(void)
{
	return pend_pos < pend_len;
}

static void
my_redisplay(void)
{
	if (g_wb)
		wb_draw_now(g_wb);
}

static void
on_line(char *line)
{
	done = true;
	free(done_line);
	done_line = line; /* NULL on EOF */
}

static int
my_startup_hook(void)
{
	if (init_text) {
		rl_insert_text(init_text);
		free(init_text);
		init_text = NULL;
	}
	return 0;
}

static char **completion_words;
static size_t n_completion_words;

static char *
word_generator(const char *text, int state)
{
	static size_t idx, len;

	if (!state) {
		idx = 0;
		len = strlen(text);
	}
	while (idx < n_completion_words) {
		const char *w = completion_words[idx++];
		if (strncmp(w, text, len) == 0)
			return strdup(w);
	}
	return NULL;
}

static void
add_word(const char *w)
{
	completion_words = realloc(completion_words, (n_completion_words + 1) * sizeof(char *));
	completion_words[n_completion_words++] = strdup(w);
}

static void
clear_words(void)
{
	for (size_t i = 0; i < n_completion_words; i++)
		free(completion_words[i]);
	free(completion_words);
	completion_words = NULL;
	n_completion_words = 0;
}

static char **
my_completion(const char *text, int start, int end)
{
	(void)start;
	(void)end;
	clear_words();
	rl_attempted_completion_over = 1;
	switch (cur_kind) {
	case PROMPT_OPEN:
	case PROMPT_WRITE:
	case PROMPT_SAVE_MANIFEST:
		rl_attempted_completion_over = 0;
		return rl_completion_matches(text, rl_filename_completion_function);
	case PROMPT_MACHINE:
	case PROMPT_MERGE_MACHINE:
	case PROMPT_RENAME_MACHINE: {
		char **names;
		size_t n = edit_machine_names(g_wb, &names);
		add_word("Default");
		for (size_t i = 0; i < n; i++) {
			add_word(names[i]);
			free(names[i]);
		}
		free(names);
		/* Only machine names (file and clock names are not machines), and
		 * no space after one: a name may hold spaces ("Machine 1") and a
		 * trailing one would become part of it. */
		rl_completion_append_character = '\0';
		return rl_completion_matches(text, word_generator);
	}
	case PROMPT_REF:
	case PROMPT_CLOCK:
		/* FILE[:CLOCK][@MACHINE] and a clock name: one word, no space. */
		rl_completion_append_character = '\0';
		break;
	case PROMPT_COMMAND:
		for (int r = REQ_NONE + 1; r < REQ__COUNT; r++)
			add_word(keymap_info((enum wb_request)r)->name);
		add_word("dump-screen");
		add_word("resize");
		add_word("select");
		add_word("rename-machine");
		add_word("delete-machine");
		add_word("print-on-exit");
		add_word("set");
		add_word("color");
		add_word("bind");
		break;
	default:
		break;
	}
	/* File names and clock names are useful in every other field. */
	if (g_wb && g_wb->s)
		for (size_t r = 0; r < wb_n_rows(g_wb); r++)
			add_word(wb_member_name(g_wb, wb_row_member(g_wb, r)));
	for (uint32_t c = 1; c <= 6; c++)
		add_word(tm_clock_name(c));
	return rl_completion_matches(text, word_generator);
}

static void
my_display_matches(char **matches, int n, int max_len)
{
	struct tm_buf b;

	(void)max_len;
	tm_buf_init(&b);
	for (int i = 1; i <= n && b.len < 900; i++)
		tm_buf_addf(&b, "%s%s", i > 1 ? "  " : "", matches[i]);
	wb_set_msg(g_wb, ROLE_INFO, "%s", b.data ? b.data : "");
	tm_buf_fini(&b);
}

void
prompt_init(struct wb *wb)
{
	const char *x = getenv("XDG_DATA_HOME"), *home = getenv("HOME");

	g_wb = wb;
	rl_readline_name = "tracemerge";
	rl_catch_signals = 0;
	rl_catch_sigwinch = 0;
	rl_change_environment = 0;
	rl_prep_term_function = NULL;
	rl_deprep_term_function = NULL;
	rl_getc_function = my_getc;
	rl_input_available_hook = my_input_available;
	rl_redisplay_function = my_redisplay;
	rl_attempted_completion_function = my_completion;
	rl_completion_display_matches_hook = my_display_matches;
	rl_startup_hook = my_startup_hook;
	rl_null = fopen("/dev/null", "w+");
	rl_instream = rl_null;
	rl_outstream = rl_null;
	rl_bind_key('\t', rl_complete);
	using_history();
	tm_buf_init(&disp);
	if (!wb->headless) {
		if (x && *x)
			snprintf(history_path, sizeof history_path, "%s/tracemerge", x);
		else if (home)
			snprintf(history_path, sizeof history_path, "%s/.local/share/tracemerge",
				 home);
		if (history_path[0]) {
			mkdir(history_path, 0700);
			strncat(history_path, "/history",
				sizeof history_path - strlen(history_path) - 1);
			read_history(history_path);
		}
	}
}

void
prompt_fini(void)
{
	if (cur_kind != PROMPT_NONE)
		rl_callback_handler_remove();
	if (history_path[0]) {
		write_history(history_path);
		history_truncate_file(history_path, 500);
	}
	clear_words();
	free(done_line);
	done_line = NULL;
	free(cur_label);
	cur_label = NULL;
	free(init_text);
	init_text = NULL;
	tm_buf_fini(&disp);
	clear_history();
	if (rl_null)
		fclose(rl_null);
	rl_null = NULL;
}

void
prompt_open(struct wb *wb, enum wb_prompt_kind kind, const char *label, const char *initial)
{
	if (wb->prompt != PROMPT_NONE)
		prompt_close(wb);
	cur_kind = kind;
	wb->prompt = kind;
	free(cur_label);
	cur_label = strdup(label);
	free(init_text);
	init_text = initial && *initial ? strdup(initial) : NULL;
	done = false;
	rl_callback_handler_install(cur_label, on_line);
	/* Select-to-replace is not available in readline: pre-filled text is
	 * kept; C-u clears it. */
}

void
prompt_close(struct wb *wb)
{
	if (cur_kind != PROMPT_NONE)
		rl_callback_handler_remove();
	cur_kind = PROMPT_NONE;
	wb->prompt = PROMPT_NONE;
}

static void
push_seq(const char *s)
{
	size_t n = strlen(s);

	if (pend_pos >= pend_len)
		pend_len = pend_pos = 0;
	if (pend_len + n <= sizeof pend) {
		memcpy(pend + pend_len, s, n);
		pend_len += n;
	}
}

void
prompt_feed(struct wb *wb, int key)
{
	enum wb_prompt_kind kind = cur_kind;
	char b[2] = {0, 0};

	if (key == KEY_RESIZE) {
		wb_draw_now(wb);
		return;
	}
	if (key == 27 || key == 3 || key == 7) { /* Esc, C-c, C-g cancel */
		prompt_close(wb);
		edit_prompt_done(wb, kind, NULL);
		return;
	}
	if (kind == PROMPT_CONFIRM) {
		/* One key answers a y/n question. */
		b[0] = (char)(key == 'y' || key == 'Y' ? 'y' : 'n');
		prompt_close(wb);
		edit_prompt_done(wb, kind, b);
		return;
	}
	switch (key) {
	case KEY_LEFT: push_seq("\033[D"); break;
	case KEY_RIGHT: push_seq("\033[C"); break;
	case KEY_UP: push_seq("\033[A"); break;
	case KEY_DOWN: push_seq("\033[B"); break;
	case KEY_HOME: push_seq("\001"); break;
	case KEY_END: push_seq("\005"); break;
	case KEY_DC: push_seq("\004"); break;
	case KEY_BACKSPACE: push_seq("\177"); break;
	case KEY_ENTER: push_seq("\r"); break;
	default:
		if (key >= 0 && key < 256) {
			b[0] = (char)key;
			push_seq(b);
		}
		break;
	}
	while (pend_pos < pend_len && !done)
		rl_callback_read_char();
	pend_len = pend_pos = 0;
	if (done) {
		char *line = done_line;
		done_line = NULL;
		done = false;
		if (line && *line && kind != PROMPT_CONFIRM) {
			HIST_ENTRY *last = history_length > 0 ? history_get(history_base + history_length - 1) : NULL;
			if (!last || strcmp(last->line, line) != 0)
				add_history(line);
		}
		prompt_close(wb);
		edit_prompt_done(wb, kind, line);
		free(line);
	}
}

const char *
prompt_line(int *cursor_cols)
{
	struct tm_buf e;
	size_t w;

	tm_buf_reset(&disp);
	tm_buf_adds(&disp, cur_label ? cur_label : "");
	if (rl_line_buffer)
		tm_buf_adds(&disp, rl_line_buffer);
	/* Cursor column: display width of label + escaped text before rl_point. */
	tm_buf_init(&e);
	w = tm_escape_display(cur_label ? cur_label : "", cur_label ? strlen(cur_label) : 0, &e,
			      NULL, 0, NULL);
	if (rl_line_buffer && rl_point > 0)
		w += tm_escape_display(rl_line_buffer, (size_t)rl_point, &e, NULL, 0, NULL);
	tm_buf_fini(&e);
	if (cursor_cols)
		*cursor_cols = (int)w;
	return disp.data ? disp.data : "";
}
