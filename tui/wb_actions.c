/* SPDX-License-Identifier: MIT */
/*
 * Requests: the one action table (WB_REQ_LIST in wb.h: key, name, help,
 * handler), the key map over it (user bindings from the config first), and
 * the one place requests are dispatched: keys, :commands and prompt answers
 * all end in a handler of the table.  A handler gets arg NULL from a key
 * (it opens its prompt when it needs text), or the text of a :command or of
 * its prompt's answer.  The handlers live by group in wb_act_view.c,
 * wb_act_edit.c and wb_act_files.c (their shared helpers, defined here:
 * wb_act.h).  Also the rc syntax of config files:
 *   set <key> = <value>   color <role> <fg> <bg> [attrs]   theme <name>
 *   bind <generic|main> <key> <request>   source <file>
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

/* ---- the table ---- */

typedef void (*action_fn)(struct wb *wb, const char *arg);

struct action {
	struct wb_request_info info;
	action_fn fn;
};

static const struct action actions[] = {
	{{REQ_NONE, "none", 0, 0, ""}, NULL},
#define WB_X_(id, name, k1, k2, fn, help) {{id, name, k1, k2, help}, fn},
	WB_REQ_LIST(WB_X_)
#undef WB_X_
};

/* :command names for completion (NULL-terminated). */
static const char *command_names[REQ__COUNT + 2];

const struct wb_request_info *
keymap_info(enum wb_request r)
{
	if ((int)r <= REQ_NONE || r >= REQ__COUNT)
		return &actions[0].info;
	return &actions[r].info;
}

/* ---- key map ---- */

struct binding {
	int key;
	enum wb_request req;
};
static struct binding user_binds[64];
static size_t n_user_binds;

enum wb_request
keymap_lookup(int key)
{
	for (size_t i = n_user_binds; i-- > 0;)
		if (user_binds[i].key == key)
			return user_binds[i].req;
	for (int r = REQ_NONE + 1; r < REQ__COUNT; r++)
		if (key && (actions[r].info.key1 == key || actions[r].info.key2 == key))
			return (enum wb_request)r;
	return REQ_NONE;
}

int
keymap_key_of(enum wb_request r)
{
	const struct wb_request_info *ri = keymap_info(r);

	for (size_t i = n_user_binds; i-- > 0;)
		if (user_binds[i].req == r)
			return user_binds[i].key;
	/* A default key still counts while no binding took it elsewhere. */
	if (ri->key1 && keymap_lookup(ri->key1) == r)
		return ri->key1;
	if (ri->key2 && keymap_lookup(ri->key2) == r)
		return ri->key2;
	return 0;
}

static enum wb_request
keymap_by_name(const char *name)
{
	for (int r = REQ_NONE + 1; r < REQ__COUNT; r++)
		if (strcmp(actions[r].info.name, name) == 0)
			return (enum wb_request)r;
	return REQ_NONE;
}

static const struct {
	const char *name;
	int key;
} key_names[] = {
	{"Enter", '\r'},       {"Esc", 27},           {"Tab", '\t'},        {"Up", KEY_UP},
	{"Down", KEY_DOWN},    {"Left", KEY_LEFT},    {"Right", KEY_RIGHT}, {"Home", KEY_HOME},
	{"End", KEY_END},      {"BS", KEY_BACKSPACE}, {"Backspace", KEY_BACKSPACE},
	{"Del", KEY_DC},       {"PgUp", KEY_PPAGE},   {"PgDn", KEY_NPAGE},  {"PgDown", KEY_NPAGE},
	{"Space", ' '},        {"Lt", '<'},           {"Gt", '>'},          {"F1", KEY_F(1)},
	{"F2", KEY_F(2)},      {"F3", KEY_F(3)},      {"F4", KEY_F(4)},     {"F5", KEY_F(5)},
	{"F6", KEY_F(6)},      {"F7", KEY_F(7)},      {"F8", KEY_F(8)},     {"F9", KEY_F(9)},
	{"F10", KEY_F(10)},    {"S-Tab", KEY_BTAB},   {"S-Up", KEY_SR},     {"S-Down", KEY_SF},
};

void
keymap_key_name(int key, char *buf, size_t len)
{
	for (size_t i = 0; i < sizeof key_names / sizeof key_names[0]; i++)
		if (key_names[i].key == key && key != ' ' && key != '<' && key != '>') {
			snprintf(buf, len, "<%s>", key_names[i].name);
			return;
		}
	if (key > 0 && key < 32)
		snprintf(buf, len, "<C-%c>", key + 'a' - 1);
	else if (key > 32 && key < 127)
		snprintf(buf, len, "%c", key);
	else if (key == ' ')
		snprintf(buf, len, "<Space>");
	else
		snprintf(buf, len, "%s", key ? "?" : "");
}

int
keymap_parse_key(const char *spec, size_t *used)
{
	if (!spec[0]) {
		*used = 0;
		return 0;
	}
	if (spec[0] == '<') {
		const char *end = strchr(spec, '>');
		if (end && end > spec + 1) {
			size_t n = (size_t)(end - spec - 1);
			if (n == 3 && (spec[1] == 'C' || spec[1] == 'c') && spec[2] == '-') {
				*used = n + 2;
				return spec[3] & 0x1f;
			}
			for (size_t i = 0; i < sizeof key_names / sizeof key_names[0]; i++)
				if (strlen(key_names[i].name) == n &&
				    strncasecmp(key_names[i].name, spec + 1, n) == 0) {
					*used = n + 2;
					return key_names[i].key;
				}
		}
	}
	*used = 1;
	return (unsigned char)spec[0];
}

/* Bind key_spec to req_name; false with what is wrong in err. */
static bool
keymap_bind(const char *key_spec, const char *req_name, char *err, size_t err_len)
{
	size_t used;
	int key = keymap_parse_key(key_spec, &used);
	enum wb_request r = keymap_by_name(req_name);

	if (!key || used != strlen(key_spec)) {
		snprintf(err, err_len, "bind: unknown key '%s' (a character, <C-x>, <F1>, <Up>...)",
			 key_spec);
		return false;
	}
	if (r == REQ_NONE) {
		snprintf(err, err_len, "bind: unknown request '%s' (? lists them, in the second "
				       "column)",
			 req_name);
		return false;
	}
	if (n_user_binds >= sizeof user_binds / sizeof user_binds[0]) {
		snprintf(err, err_len, "bind: too many bindings (at most %zu)",
			 sizeof user_binds / sizeof user_binds[0]);
		return false;
	}
	user_binds[n_user_binds++] = (struct binding){key, r};
	return true;
}

/* ---- helpers ---- */

/* The list pane, its lines the model's rows through the filter. */
struct pane *
list_pane(struct wb *wb)
{
	list_refresh(&wb->ui, &wb->m);
	return &wb->ui.pane[PANE_LIST];
}

/* The selected model row, or SIZE_MAX (no rows, or none shown). */
size_t
sel_row(struct wb *wb)
{
	list_pane(wb);
	return list_sel_row(&wb->ui);
}

const char *
sel_path(struct wb *wb)
{
	return model_row_name(&wb->m, sel_row(wb));
}

void
set_filter(struct wb *wb, const char *text)
{
	free(wb->ui.filter);
	wb->ui.filter = text && *text ? strdup(text) : NULL;
	list_refresh(&wb->ui, &wb->m);
}

/* Select model row `row`; a row the filter hides clears the filter (it was
 * asked for by name or number).  Returns whether the filter was cleared. */
bool
select_row(struct wb *wb, size_t row)
{
	list_pane(wb);
	if (list_select_row(&wb->ui, row))
		return false;
	set_filter(wb, NULL);
	list_select_row(&wb->ui, row);
	return true;
}

const struct tm_manifest_file *
sel_file(struct wb *wb)
{
	return model_manifest_file(&wb->m, sel_path(wb));
}

void
msg(struct wb *wb, enum wb_role role, const char *text)
{
	model_set_msg(&wb->m, role, "%s", text);
}

/* The selected row's name when it is a trace file (machines, offsets and the
 * timeline apply to traces); else NULL, with a message saying why not. */
const char *
sel_trace(struct wb *wb)
{
	const char *path = sel_path(wb);
	const struct tm_member *mb;
	const char *what = NULL;

	if (!path)
		return NULL;
	if (wb->m.man_broken) {
		model_set_msg(&wb->m, ROLE_ERROR,
		    "The manifest does not parse and an edit would drop it: %s edits its text, %s "
		    "converts the outdated syntax",
		    model_key(&wb->m, REQ_EDIT_MANIFEST), model_key(&wb->m, REQ_CONVERT_MANIFEST));
		return NULL;
	}
	mb = tm_session_member(wb->m.s, model_row_member(&wb->m, sel_row(wb)));
	if (text_member_is_trace(mb))
		return path;
	if (mb && mb->format == TM_FMT_MANIFEST)
		what = "the manifest";
	else if (mb && mb->is_hidden)
		what = "hidden: trace_processor never reads it";
	else
		what = "a container";
	model_set_msg(&wb->m, ROLE_WARNING, "%s is %s; machines and offsets apply to traces",
		      path, what);
	return NULL;
}

/* Ask for the text of request req (its handler gets the answer). */
void
ask(struct wb *wb, enum wb_request req, enum wb_complete kind, const char *label,
    const char *initial)
{
	wb->ui.prompt_req = req;
	wb->ui.confirm = CONFIRM_NONE;
	prompt_open(wb, kind, label, initial);
}

void
confirm(struct wb *wb, enum wb_confirm c, const char *question)
{
	wb->ui.prompt_req = REQ_NONE;
	wb->ui.confirm = c;
	prompt_open(wb, COMPLETE_WORDS, question, "");
}

/* A key gives NULL (open the prompt); a :command without text gives "" and
 * opens it too, unless the handler takes "" as a value. */
bool
wants_prompt(const struct wb *wb, const char *arg)
{
	return !arg || (!*arg && !wb->ui.answering);
}

void
run(struct wb *wb, enum wb_request req, const char *arg)
{
	if ((int)req <= REQ_NONE || req >= REQ__COUNT)
		return;
	list_pane(wb);
	actions[req].fn(wb, arg);
}

/* ---- dispatch ---- */

static void answer_recovery(struct wb *wb, int answer);

void
answer(struct wb *wb, enum wb_request req, enum wb_confirm c, const char *line)
{
	if (c != CONFIRM_NONE) {
		bool yes = line[0] == 'y' || line[0] == 'Y';
		if (c == CONFIRM_QUIT && yes) {
			wb->run.quit = true;
		} else if (c == CONFIRM_OVERWRITE && yes && wb->ui.pending_write) {
			if (wb->ui.pending_req == REQ_WRITE)
				out_write_tar(wb, wb->ui.pending_write, true);
			else if (wb->ui.pending_req == REQ_REPORT)
				out_write_report(wb, wb->ui.pending_write, true);
			else
				out_save_manifest(wb, wb->ui.pending_write, true);
		} else if (c == CONFIRM_PRINT_ON_EXIT) {
			if (yes)
				act_print_on_exit(wb, NULL);
			else
				model_set_msg(&wb->m, ROLE_DIM, "Not copied; %s saves the manifest to a file",
					      model_key(&wb->m, REQ_SAVE_MANIFEST));
		} else if (c == CONFIRM_SOLVE) {
			model_solve_answer(&wb->m, yes);
			wb->ui.help = wb->ui.solve_view = false;
			if (!yes)
				msg(wb, ROLE_DIM, "Solve: declined; the manifest is as it was");
		} else if (c == CONFIRM_RESTORE) {
			answer_recovery(wb, yes ? 'y' : line[0] == 'n' ? 'n' : 0);
		} else {
			msg(wb, ROLE_DIM, "Cancelled");
		}
		return;
	}
	wb->ui.answering = true;
	run(wb, req, line);
	wb->ui.answering = false;
}

static void
help_key(struct wb *wb, int key)
{
	struct pane *p = &wb->ui.pane[PANE_HELP];
	enum wb_request r = keymap_lookup(key);

	if (r == REQ_QUIT || r == REQ_HELP || r == REQ_MESSAGES || key == 27 || key == '\r' ||
	    key == '\n' || key == KEY_ENTER) {
		wb->ui.help = false;
		wb->ui.messages = false;
	} else if (r == REQ_DOWN) {
		pane_scroll(p, 1);
	} else if (r == REQ_UP) {
		pane_scroll(p, -1);
	} else if (r == REQ_DETAILS_DOWN || r == REQ_PAGE_DOWN) {
		pane_scroll(p, (long)pane_rows(p));
	} else if (r == REQ_DETAILS_UP || r == REQ_PAGE_UP) {
		pane_scroll(p, -(long)pane_rows(p));
	} else if (r == REQ_FIRST) {
		p->top = 0;
	} else if (r == REQ_LAST) {
		p->top = p->n;
	} else if (r == REQ_QUIT_NOW) {
		wb->run.quit = true;
	}
}

/* ---- while an opening runs ---- */

void
actions_opening_clamp(struct wb *wb)
{
	struct wb_opening *o = &wb->ui.opening;
	size_t n = model_open_rows(&wb->m);
	size_t h = (size_t)layout_opening_rows(LINES);

	if (o->follow || o->sel >= n)
		o->sel = n ? n - 1 : 0;
	if (o->sel < o->top)
		o->top = o->sel;
	if (h && o->sel >= o->top + h)
		o->top = o->sel - h + 1;
	if (n <= h)
		o->top = 0;
}

bool
actions_opening_key(struct wb *wb, int key)
{
	struct wb_opening *o = &wb->ui.opening;
	size_t n = model_open_rows(&wb->m);
	size_t h = (size_t)layout_opening_rows(LINES);
	size_t page = h > 1 ? h - 1 : 1;

	o->note = NULL;
	if (key == KEY_RESIZE) {
		wb->ui.redraw_all = true;
		actions_opening_clamp(wb);
		return true;
	}
	switch (keymap_lookup(key)) {
	case REQ_DOWN:
		o->sel++;
		o->follow = n && o->sel >= n - 1;
		break;
	case REQ_UP:
		o->sel = o->sel ? o->sel - 1 : 0;
		o->follow = false;
		break;
	case REQ_PAGE_DOWN:
		o->sel += page;
		o->follow = n && o->sel >= n - 1;
		break;
	case REQ_PAGE_UP:
		o->sel = o->sel > page ? o->sel - page : 0;
		o->follow = false;
		break;
	case REQ_FIRST:
		o->sel = 0;
		o->follow = false;
		break;
	case REQ_LAST:
		o->follow = true;
		break;
	case REQ_HELP:
		o->help = !o->help;
		break;
	case REQ_REDRAW:
		wb->ui.redraw_all = true;
		break;
	default:
		o->note = "Still reading the archive: the verdict, edits and the other keys "
			  "come when the listing ends (q quits now)";
		break;
	}
	actions_opening_clamp(wb);
	return true;
}

void
actions_key(struct wb *wb, int key)
{
	if (wb->ui.prompting) {
		enum wb_request req = wb->ui.prompt_req;
		enum wb_confirm c = wb->ui.confirm;
		char *line = NULL;
		switch (prompt_feed(wb, key, c != CONFIRM_NONE, &line)) {
		case PROMPT_PENDING:
			break;
		case PROMPT_CANCELLED:
			wb->ui.confirm = CONFIRM_NONE;
			if (c == CONFIRM_SOLVE) {
				model_solve_answer(&wb->m, false);
				wb->ui.help = wb->ui.solve_view = false;
			}
			if (req == REQ_PAIR && wb->ui.picker.on)
				picker_close(wb);
			if (req == REQ_OPEN && !wb->m.s)
				wb->run.quit = true;
			msg(wb, ROLE_DIM, "Cancelled");
			if (c == CONFIRM_RESTORE)
				answer_recovery(wb, 0);
			break;
		case PROMPT_ACCEPTED:
			wb->ui.confirm = CONFIRM_NONE;
			answer(wb, req, c, line);
			break;
		}
		free(line);
		return;
	}
	if (key == KEY_RESIZE)
		return;
	if (key == KEY_ENTER) /* the keypad's Enter is Enter */
		key = '\r';
	if (key == 3) {
		/* Ctrl-C (a key in raw mode): stops what runs, else quits as q
		 * does (asking when edits are unsaved).  A scan is cancelled
		 * first; the picker and the help close. */
		if (wb->ui.picker.on)
			picker_close(wb);
		else if (wb->ui.help)
			wb->ui.help = wb->ui.solve_view = false;
		else if (wb->m.worker_running)
			run(wb, REQ_CANCEL_SCAN, NULL);
		else
			run(wb, REQ_QUIT, NULL);
		return;
	}
	if (wb->ui.picker.on) {
		picker_key(wb, key);
		return;
	}
	if (wb->ui.browse.on && !wb->ui.help) {
		browse_key(wb, key);
		return;
	}
	if (wb->ui.help) {
		help_key(wb, key);
		return;
	}
	run(wb, keymap_lookup(key), NULL);
}

static bool
in_pane(const struct pane *p, int y, int x)
{
	return p->h > 0 && y >= p->y && y < p->y + p->h && x >= p->x && x < p->x + p->w;
}

/* A click selects the list line under it and focuses the pane it is in;
 * the wheel scrolls the pane under the pointer (the list: its selection)
 * three lines at a time, the focus unchanged.  Ignored while a prompt is
 * open; on the help screen the wheel scrolls it. */
void
actions_mouse(struct wb *wb, enum wb_mouse what, int y, int x)
{
	static const enum wb_pane_id order[] = {PANE_LIST, PANE_DETAILS, PANE_MANIFEST};
	long step = what == MOUSE_WHEEL_UP ? -3 : 3;
	struct pane *list = list_pane(wb);

	if (wb->ui.prompting || !wb->ui.mouse)
		return;
	if (wb->ui.help) {
		if (what != MOUSE_CLICK)
			pane_scroll(&wb->ui.pane[PANE_HELP], step);
		return;
	}
	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
		enum wb_pane_id id = order[i];
		struct pane *p = &wb->ui.pane[id];
		if (!in_pane(p, y, x))
			continue;
		if (what != MOUSE_CLICK) {
			if (id == PANE_LIST) {
				pane_move(list, step);
			} else {
				if (id == PANE_DETAILS)
					wb->ui.det_row = sel_row(wb);
				pane_scroll(p, step);
			}
			return;
		}
		set_focus(wb, id);
		if (id == PANE_LIST && y > p->y && p->top + (size_t)(y - p->y - 1) < list->n)
			list->sel = p->top + (size_t)(y - p->y - 1);
		return;
	}
}

void
actions_command(struct wb *wb, const char *line)
{
	char name[64];
	const char *args;
	size_t n;
	enum wb_request r;

	while (*line == ' ')
		line++;
	n = strcspn(line, " \t");
	if (n == 0)
		return;
	if (n >= sizeof name)
		n = sizeof name - 1;
	memcpy(name, line, n);
	name[n] = 0;
	args = line + n;
	while (*args == ' ' || *args == '\t')
		args++;
	if (strcmp(name, "q") == 0)
		snprintf(name, sizeof name, "quit");
	r = keymap_by_name(name);
	if (r == REQ_NONE) {
		model_set_msg(&wb->m, ROLE_ERROR, "Unknown command: %s", name);
	} else if (actions[r].fn == act_config) {
		char err[256];
		if (!actions_config_line(wb, line, err, sizeof err))
			msg(wb, ROLE_ERROR, err);
	} else {
		run(wb, r, args);
	}
}

/* Offer the next recovery file of an earlier session on these inputs
 * (newest first): its time and what it changes in the question; y
 * restores it, n discards it, Esc (any other key) keeps it for the next
 * start. */
static void
offer_next_recovery(struct wb *wb)
{
	while (wb->run.rec_offer < wb->run.n_rec_offers) {
		const char *path = wb->run.rec_offers[wb->run.rec_offer];
		char q[512], when[64] = "?", *what = model_recovery_summary(&wb->m, path);
		struct stat st;
		if (!what) { /* unreadable: offered no more */
			wb->run.rec_offer++;
			continue;
		}
		if (stat(path, &st) == 0) {
			struct tm tmv;
			time_t t = st.st_mtime;
			localtime_r(&t, &tmv);
			strftime(when, sizeof when, "%m-%d %H:%M:%S", &tmv);
		}
		snprintf(q, sizeof q, "Restore edits of %s (%zu/%zu: %s)? y/n/Esc ",
			 when, wb->run.rec_offer + 1, wb->run.n_rec_offers, what);
		free(what);
		confirm(wb, CONFIRM_RESTORE, q);
		return;
	}
}

void
actions_offer_recovery(struct wb *wb)
{
	out_recovery_list(wb);
	offer_next_recovery(wb);
}

/* The answer to a recovery offer: y restores it (the session removes it
 * once the edits are saved or superseded), n discards it, Esc keeps it for
 * the next start; the next one is offered until one is restored. */
static void
answer_recovery(struct wb *wb, int answer)
{
	if (wb->run.rec_offer >= wb->run.n_rec_offers)
		return;
	const char *path = wb->run.rec_offers[wb->run.rec_offer++];
	char *e = tm_escape_str(path);
	if (answer == 'y') {
		if (model_restore(&wb->m, path)) {
			free(wb->run.recovery_restored);
			wb->run.recovery_restored = strdup(path);
		}
		free(e);
		return;
	}
	if (answer == 'n') {
		out_recovery_remove(path);
		model_set_msg(&wb->m, ROLE_DIM, "Discarded the recovered edits (%s)", e);
	} else {
		model_set_msg(&wb->m, ROLE_DIM, "Kept %s: offered again at the next start", e);
	}
	free(e);
	offer_next_recovery(wb);
}

void
actions_print_mdoc(FILE *f)
{
	char k[32];

	fprintf(f, ".Bl -tag -width Ds\n");
	for (int r = REQ_NONE + 1; r < REQ__COUNT; r++) {
		const struct wb_request_info *ri = &actions[r].info;
		fprintf(f, ".It Cm :%s", ri->name);
		if (ri->key1) {
			keymap_key_name(ri->key1, k, sizeof k);
			fprintf(f, " Ic \\&%s", k);
		}
		if (ri->key2) {
			keymap_key_name(ri->key2, k, sizeof k);
			fprintf(f, " , \\&%s", k);
		}
		fputc('\n', f);
		for (const char *c = ri->help; *c; c++) {
			if (*c == '\\')
				fputs("\\e", f);
			else
				fputc(*c, f);
		}
		fputc('\n', f);
	}
	fprintf(f, ".El\n");
}

/* The model's texts name keys as bound now (wb->m.keys). */
static void
name_keys(struct wb *wb)
{
	for (int r = REQ_NONE + 1; r < REQ__COUNT; r++) {
		int key = keymap_key_of((enum wb_request)r);
		if (key) {
			/* in sentences without the brackets: "F2 renames" */
			char k[40];
			keymap_key_name(key, k, sizeof k);
			size_t n = strlen(k);
			if (n > 2 && k[0] == '<' && k[n - 1] == '>')
				snprintf(wb->m.keys[r], sizeof wb->m.keys[r], "%.*s", (int)(n - 2), k + 1);
			else
				snprintf(wb->m.keys[r], sizeof wb->m.keys[r], "%s", k);
		} else
			snprintf(wb->m.keys[r], sizeof wb->m.keys[r], ":%s", actions[r].info.name);
	}
}

void
actions_init(struct wb *wb)
{
	size_t k = 0;

	name_keys(wb);
	for (int r = REQ_NONE + 1; r < REQ__COUNT; r++)
		command_names[k++] = actions[r].info.name;
	command_names[k] = NULL;
	prompt_init(wb, command_names);
}

/* ---- config ---- */

bool
actions_load_theme(struct wb *wb, const char *name)
{
	char path[PATH_MAX * 2 + 64];

	if (theme_find(name, path, sizeof path))
		return actions_config_file(wb, path, false);
	if (strcmp(name, "default") == 0) {
		theme_builtin();
		return true;
	}
	return false;
}

bool
actions_config_line(struct wb *wb, const char *line, char *err, size_t err_len)
{
	char buf[1024], *tok[16], *save = NULL;
	int n = 0;

	snprintf(buf, sizeof buf, "%s", line);
	buf[strcspn(buf, "\r\n")] = 0;
	/* A word starting with '#' starts a comment, unless it is a colour
	 * (#rrggbb). */
	for (char *t = strtok_r(buf, " \t", &save); t && n < 16; t = strtok_r(NULL, " \t", &save)) {
		if (t[0] == '#' && !(strlen(t) == 7 && strspn(t + 1, "0123456789abcdefABCDEF") == 6))
			break;
		tok[n++] = t;
	}
	if (n == 0)
		return true;
	if (strcmp(tok[0], "color") == 0)
		return theme_color(tok, n, err, err_len);
	if (strcmp(tok[0], "theme") == 0 && n == 2)
		return actions_load_theme(wb, tok[1]) ||
		       (snprintf(err, err_len, "theme: cannot load '%s'", tok[1]), false);
	if (strcmp(tok[0], "bind") == 0) {
		if (n != 4) {
			snprintf(err, err_len, "bind: expected bind <keymap> <key> <request>");
			return false;
		}
		if (!keymap_bind(tok[2], tok[3], err, err_len))
			return false;
		name_keys(wb);
		return true;
	}
	if (strcmp(tok[0], "source") == 0 && n == 2)
		return actions_config_file(wb, tok[1], false);
	if (strcmp(tok[0], "set") == 0 && n >= 4 && strcmp(tok[2], "=") == 0) {
		bool yes = strcmp(tok[3], "yes") == 0 || strcmp(tok[3], "true") == 0 ||
			   strcmp(tok[3], "1") == 0;
		if (strcmp(tok[1], "theme") == 0)
			return actions_load_theme(wb, tok[3]) ||
			       (snprintf(err, err_len, "set theme: cannot load '%s'", tok[3]),
				false);
		if (strcmp(tok[1], "ascii") == 0 || strcmp(tok[1], "line-graphics") == 0) {
			wb->ui.ascii =
				strcmp(tok[1], "ascii") == 0 ? yes : strcmp(tok[3], "ascii") == 0;
			return true;
		}
		if (strcmp(tok[1], "print-manifest-on-exit") == 0) {
			wb->m.print_manifest_on_exit = yes;
			return true;
		}
		if (strcmp(tok[1], "mouse") == 0) {
			wb->ui.mouse = yes;
			return true;
		}
		const char *cerr;
		if (model_cache_setting(tok[1], tok[3], &wb->m.no_cache, &wb->m.cache_max, &cerr)) {
			if (cerr)
				snprintf(err, err_len, "%s", cerr);
			return !cerr;
		}
		if (strcmp(tok[1], "zoom") == 0) {
			wb->ui.zoom = atoi(tok[3]);
			return true;
		}
		snprintf(err, err_len, "set: unknown setting '%s'", tok[1]);
		return false;
	}
	snprintf(err, err_len, "unknown command '%s'", tok[0]);
	return false;
}

bool
actions_config_file(struct wb *wb, const char *path, bool quiet)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	int lineno = 0;

	if (!f) {
		if (!quiet)
			model_set_msg(&wb->m, ROLE_ERROR, "tracemerge warning: %s: cannot open",
				      path);
		return false;
	}
	while (fgets(line, sizeof line, f)) {
		char err[256];
		lineno++;
		if (!actions_config_line(wb, line, err, sizeof err))
			model_set_msg(&wb->m, ROLE_ERROR, "tracemerge warning: %s:%d: %s", path,
				      lineno, err);
	}
	fclose(f);
	return true;
}
