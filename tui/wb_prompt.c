/* SPDX-License-Identifier: MIT */
/*
 * Text fields through readline's callback interface, inside the ncurses
 * screen: we own the terminal (prep/deprep NULL, no signal or SIGWINCH
 * handling by readline), feed it one byte at a time from our loop through
 * rl_getc_function, and draw its line ourselves (rl_redisplay_function), so
 * the screen keeps updating while a prompt is open.  Curses keys are turned
 * into the escape sequences readline binds; the answer goes back to the
 * caller of prompt_feed (this file calls nothing above it).  Completion offers member names,
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
static bool is_open;
static enum wb_complete cur_kind;
static const char *const *command_words;
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
	if (g_wb && g_wb->run.redraw)
		g_wb->run.redraw(g_wb);
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
	case COMPLETE_FILES:
		rl_attempted_completion_over = 0;
		return rl_completion_matches(text, rl_filename_completion_function);
	case COMPLETE_MACHINES: {
		char **names;
		size_t n = model_machine_names(&g_wb->m, &names);
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
	case COMPLETE_REF:
		/* FILE[:CLOCK][@MACHINE] and a clock name: one word, no space. */
		rl_completion_append_character = '\0';
		break;
	case COMPLETE_COMMANDS:
		for (size_t i = 0; command_words && command_words[i]; i++)
			add_word(command_words[i]);
		break;
	default:
		break;
	}
	/* File names and clock names are useful in every other field. */
	if (g_wb && g_wb->m.s)
		for (size_t r = 0; r < model_n_rows(&g_wb->m); r++)
			add_word(model_row_name(&g_wb->m, r));
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
	model_set_msg(&g_wb->m, ROLE_INFO, "%s", b.data ? b.data : "");
	tm_buf_fini(&b);
}

void
prompt_init(struct wb *wb, const char *const *commands)
{
	const char *x = getenv("XDG_DATA_HOME"), *home = getenv("HOME");

	g_wb = wb;
	command_words = commands;
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
	if (!wb->run.headless) {
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
	if (is_open)
		rl_callback_handler_remove();
	is_open = false;
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
prompt_open(struct wb *wb, enum wb_complete kind, const char *label, const char *initial)
{
	if (is_open)
		prompt_close(wb);
	cur_kind = kind;
	is_open = true;
	wb->ui.prompting = true;
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
	if (is_open)
		rl_callback_handler_remove();
	is_open = false;
	wb->ui.prompting = false;
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

enum wb_prompt_result
prompt_feed(struct wb *wb, int key, bool yes_no, char **answer)
{
	char b[2] = {0, 0};

	*answer = NULL;
	if (key == KEY_RESIZE) {
		if (wb->run.redraw)
			wb->run.redraw(wb);
		return PROMPT_PENDING;
	}
	if (key == 27 || key == 3 || key == 7) { /* Esc, C-c, C-g cancel */
		prompt_close(wb);
		return PROMPT_CANCELLED;
	}
	if (yes_no) {
		/* One key answers a y/n question. */
		prompt_close(wb);
		/* "y", "n", or "?" for any other key (a no, except where a
		 * question tells n from other keys: a recovery file is
		 * discarded only by n) */
		*answer = strdup(key == 'y' || key == 'Y'   ? "y"
				 : key == 'n' || key == 'N' ? "n"
							    : "?");
		return PROMPT_ACCEPTED;
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
	if (!done)
		return PROMPT_PENDING;
	char *line = done_line;
	done_line = NULL;
	done = false;
	if (line && *line) {
		HIST_ENTRY *last =
			history_length > 0 ? history_get(history_base + history_length - 1) : NULL;
		if (!last || strcmp(last->line, line) != 0)
			add_history(line);
	}
	prompt_close(wb);
	if (!line)
		return PROMPT_CANCELLED; /* EOF (C-d on an empty line) */
	*answer = line;
	return PROMPT_ACCEPTED;
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
