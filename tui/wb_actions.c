/* SPDX-License-Identifier: MIT */
/*
 * Requests: the one action table (WB_REQ_LIST in wb.h: key, name, help,
 * handler), the key map over it (user bindings from the config first), and
 * the one place requests are dispatched: keys, :commands and prompt answers
 * all end in a handler of the table.  A handler gets arg NULL from a key
 * (it opens its prompt when it needs text), or the text of a :command or of
 * its prompt's answer.  Also the rc syntax of config files:
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

/* ---- the table ---- */

typedef void (*action_fn)(struct wb *wb, const char *arg);

#define WB_X_(id, name, k1, k2, fn, help) static void fn(struct wb *wb, const char *arg);
WB_REQ_LIST(WB_X_)
#undef WB_X_

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

static enum wb_request
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
static struct pane *
list_pane(struct wb *wb)
{
	list_refresh(&wb->ui, &wb->m);
	return &wb->ui.pane[PANE_LIST];
}

/* The selected model row, or SIZE_MAX (no rows, or none shown). */
static size_t
sel_row(struct wb *wb)
{
	list_pane(wb);
	return list_sel_row(&wb->ui);
}

static const char *
sel_path(struct wb *wb)
{
	return model_row_name(&wb->m, sel_row(wb));
}

static void
set_filter(struct wb *wb, const char *text)
{
	free(wb->ui.filter);
	wb->ui.filter = text && *text ? strdup(text) : NULL;
	list_refresh(&wb->ui, &wb->m);
}

/* Select model row `row`; a row the filter hides clears the filter (it was
 * asked for by name or number).  Returns whether the filter was cleared. */
static bool
select_row(struct wb *wb, size_t row)
{
	list_pane(wb);
	if (list_select_row(&wb->ui, row))
		return false;
	set_filter(wb, NULL);
	list_select_row(&wb->ui, row);
	return true;
}

static const struct tm_manifest_file *
sel_file(struct wb *wb)
{
	return model_manifest_file(&wb->m, sel_path(wb));
}

static void
msg(struct wb *wb, enum wb_role role, const char *text)
{
	model_set_msg(&wb->m, role, "%s", text);
}

/* The selected row's name when it is a trace file (machines, offsets and the
 * timeline apply to traces); else NULL, with a message saying why not. */
static const char *
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
static void
ask(struct wb *wb, enum wb_request req, enum wb_complete kind, const char *label,
    const char *initial)
{
	wb->ui.prompt_req = req;
	wb->ui.confirm = CONFIRM_NONE;
	prompt_open(wb, kind, label, initial);
}

static void
confirm(struct wb *wb, enum wb_confirm c, const char *question)
{
	wb->ui.prompt_req = REQ_NONE;
	wb->ui.confirm = c;
	prompt_open(wb, COMPLETE_WORDS, question, "");
}

/* A key gives NULL (open the prompt); a :command without text gives "" and
 * opens it too, unless the handler takes "" as a value. */
static bool
wants_prompt(const struct wb *wb, const char *arg)
{
	return !arg || (!*arg && !wb->ui.answering);
}

static void
run(struct wb *wb, enum wb_request req, const char *arg)
{
	if ((int)req <= REQ_NONE || req >= REQ__COUNT)
		return;
	list_pane(wb);
	actions[req].fn(wb, arg);
}

/* ---- moving ---- */

/* The pane with the focus: the file list, the details or the manifest. */
static enum wb_pane_id
focused(const struct wb *wb)
{
	return wb->ui.focus_manifest ? PANE_MANIFEST
	       : wb->ui.focus_details ? PANE_DETAILS
				      : PANE_LIST;
}

static void
set_focus(struct wb *wb, enum wb_pane_id id)
{
	wb->ui.focus_manifest = id == PANE_MANIFEST;
	wb->ui.focus_details = id == PANE_DETAILS;
}

/* Move by delta rows in the focused pane: the list's selection, or the
 * details' or manifest's scroll (the details belong to the selected row). */
static void
move_focused(struct wb *wb, long delta)
{
	enum wb_pane_id id = focused(wb);

	if (id == PANE_LIST) {
		pane_move(list_pane(wb), delta);
		return;
	}
	if (id == PANE_DETAILS)
		wb->ui.det_row = sel_row(wb);
	pane_scroll(&wb->ui.pane[id], delta);
}

/* A page: the list's rows; in text, a line less (one line of context). */
static long
page_rows(const struct wb *wb)
{
	size_t rows = pane_rows(&wb->ui.pane[focused(wb)]);

	if (focused(wb) != PANE_LIST && rows > 1)
		rows--;
	return rows > 0 ? (long)rows : 1;
}

static void
act_down(struct wb *wb, const char *arg)
{
	(void)arg;
	move_focused(wb, 1);
}

static void
act_up(struct wb *wb, const char *arg)
{
	(void)arg;
	move_focused(wb, -1);
}

static void
act_page_down(struct wb *wb, const char *arg)
{
	(void)arg;
	move_focused(wb, page_rows(wb));
}

static void
act_page_up(struct wb *wb, const char *arg)
{
	(void)arg;
	move_focused(wb, -page_rows(wb));
}

static void
act_first(struct wb *wb, const char *arg)
{
	(void)arg;
	if (focused(wb) == PANE_LIST) {
		list_pane(wb)->sel = 0;
		wb->ui.pane[PANE_MANIFEST].top = 0;
	} else {
		move_focused(wb, -(long)(SIZE_MAX / 4));
	}
}

static void
act_last(struct wb *wb, const char *arg)
{
	struct pane *p = list_pane(wb);

	(void)arg;
	if (focused(wb) != PANE_LIST)
		move_focused(wb, (long)(SIZE_MAX / 4));
	else if (p->n)
		p->sel = p->n - 1;
}

static void
act_enter(struct wb *wb, const char *arg)
{
	(void)arg;
	if (focused(wb) != PANE_LIST) {
		set_focus(wb, PANE_LIST);
	} else if (sel_path(wb)) {
		set_focus(wb, PANE_DETAILS);
		wb->ui.det_row = sel_row(wb);
	}
}

/* Tab: the files and the manifest (from the details, the manifest); Enter
 * goes between the files and the details. */
static void
act_focus(struct wb *wb, const char *arg)
{
	(void)arg;
	set_focus(wb, focused(wb) == PANE_MANIFEST ? PANE_LIST : PANE_MANIFEST);
}

static void
act_details_down(struct wb *wb, const char *arg)
{
	struct pane *p = &wb->ui.pane[PANE_DETAILS];
	size_t rows = pane_rows(p);

	(void)arg;
	/* A page down; past the end, back to the top. */
	if (rows > 0 && p->top + rows < p->n)
		p->top += rows;
	else
		p->top = 0;
	wb->ui.det_row = sel_row(wb);
}

static void
act_details_up(struct wb *wb, const char *arg)
{
	struct pane *p = &wb->ui.pane[PANE_DETAILS];
	size_t rows = pane_rows(p);

	(void)arg;
	p->top = p->top > rows ? p->top - rows : 0;
	wb->ui.det_row = sel_row(wb);
}

/* ---- search and filter ---- */

struct lines {
	char **v;
	size_t n, cap;
};

static void
lines_add(struct lines *l, const char *s, size_t len)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 64;
		l->v = realloc(l->v, l->cap * sizeof *l->v);
		if (!l->v)
			abort();
	}
	if (!(l->v[l->n++] = strndup(s, len)))
		abort();
}

static void
lines_fini(struct lines *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

/* The focused pane's lines as it shows them: the list's file names, the
 * selected file's details wrapped at the pane's width, or the manifest. */
static void
pane_lines(struct wb *wb, enum wb_pane_id id, struct lines *out)
{
	memset(out, 0, sizeof *out);
	if (id == PANE_LIST) {
		struct pane *p = list_pane(wb);
		for (size_t i = 0; i < p->n; i++) {
			const char *name = model_row_name(&wb->m, list_row(&wb->ui, i));
			lines_add(out, name ? name : "", name ? strlen(name) : 0);
		}
	} else if (id == PANE_DETAILS) {
		struct wb_paras ps;
		size_t row = sel_row(wb);
		memset(&ps, 0, sizeof ps);
		if (row == SIZE_MAX)
			return;
		model_fixes_ensure(&wb->m, model_row_name(&wb->m, row));
		text_details(&wb->m, row, &ps, wb->fr.details_name);
		text_wrap(&ps, layout_left_cols(COLS));
		for (size_t i = 0; i < ps.n; i++)
			for (size_t k = 0; k < ps.p[i].n_lines; k++)
				lines_add(out, ps.p[i].text + ps.p[i].start[k], ps.p[i].len[k]);
		text_paras_fini(&ps);
	} else {
		struct tm_buf b;
		tm_buf_init(&b);
		model_manifest_json(&wb->m, &b);
		for (size_t i = 0, e; b.data && i < b.len; i = e + 1) {
			const char *nl = memchr(b.data + i, '\n', b.len - i);
			e = nl ? (size_t)(nl - b.data) : b.len;
			lines_add(out, b.data + i, e - i);
		}
		tm_buf_fini(&b);
	}
}

/* Go to the next (dir 1) or previous (-1) line of the focused pane that
 * holds the search, from the current one (fresh: the current one counts),
 * wrapping around; the message says which match of how many. */
static void
search_run(struct wb *wb, int dir, bool fresh)
{
	static const char *const where[PANE__COUNT] = {
		[PANE_LIST] = "file names", [PANE_DETAILS] = "details", [PANE_MANIFEST] = "manifest"};
	enum wb_pane_id id = focused(wb);
	struct pane *p = id == PANE_LIST ? list_pane(wb) : &wb->ui.pane[id];
	const char *pat = wb->ui.search;
	size_t cur = id == PANE_LIST ? p->sel : p->top, hit = SIZE_MAX, n_match = 0, ord = 0;
	struct lines l;

	wb->ui.search_pane = id;
	pane_lines(wb, id, &l);
	for (size_t i = 0; i < l.n; i++)
		n_match += pane_find(l.v[i], strlen(l.v[i]), pat) != NULL;
	for (size_t k = fresh ? 0 : 1; n_match && k <= l.n; k++) {
		size_t i = (cur + (dir > 0 ? k : l.n * 2 - k)) % l.n;
		if (pane_find(l.v[i], strlen(l.v[i]), pat)) {
			hit = i;
			break;
		}
	}
	if (hit == SIZE_MAX) {
		model_set_msg(&wb->m, ROLE_WARNING, "Not found in the %s: %s", where[id], pat);
		lines_fini(&l);
		return;
	}
	for (size_t i = 0; i <= hit; i++)
		ord += pane_find(l.v[i], strlen(l.v[i]), pat) != NULL;
	if (id == PANE_LIST) {
		p->sel = hit;
	} else {
		p->top = hit;
		if (id == PANE_DETAILS)
			wb->ui.det_row = sel_row(wb);
	}
	model_set_msg(&wb->m, ROLE_INFO, "/%s: match %zu of %zu in the %s%s", pat, ord, n_match,
		      where[id],
		      (dir > 0 ? hit < cur : hit > cur) ? (dir > 0 ? " (wrapped to the top)"
								 : " (wrapped to the end)")
							: "");
	lines_fini(&l);
}

static void
act_search(struct wb *wb, const char *arg)
{
	static const char *const label[PANE__COUNT] = {[PANE_LIST] = "Search file names: ",
						       [PANE_DETAILS] = "Search the details: ",
						       [PANE_MANIFEST] = "Search the manifest: "};

	if (wants_prompt(wb, arg)) {
		ask(wb, REQ_SEARCH, COMPLETE_WORDS, label[focused(wb)], "");
		return;
	}
	if (*arg) {
		free(wb->ui.search);
		wb->ui.search = strdup(arg);
	} else if (!wb->ui.search) {
		return; /* nothing typed, nothing to repeat */
	}
	search_run(wb, 1, true);
}

static void
search_again(struct wb *wb, int dir)
{
	char k[32];

	if (wb->ui.search) {
		search_run(wb, dir, false);
		return;
	}
	keymap_key_name(keymap_key_of(REQ_SEARCH), k, sizeof k);
	model_set_msg(&wb->m, ROLE_WARNING, "No search yet: %s searches the focused pane", k);
}

static void
act_search_next(struct wb *wb, const char *arg)
{
	(void)arg;
	search_again(wb, 1);
}

static void
act_search_prev(struct wb *wb, const char *arg)
{
	(void)arg;
	search_again(wb, -1);
}

static void
act_filter(struct wb *wb, const char *arg)
{
	size_t all = model_n_rows(&wb->m);
	struct pane *p;
	char k[32];

	if (wants_prompt(wb, arg)) {
		ask(wb, REQ_FILTER, COMPLETE_WORDS, "Show files whose name contains (empty: all): ",
		    wb->ui.filter ? wb->ui.filter : "");
		return;
	}
	set_filter(wb, arg);
	p = list_pane(wb);
	keymap_key_name(keymap_key_of(REQ_FILTER), k, sizeof k);
	if (!wb->ui.filter)
		model_set_msg(&wb->m, ROLE_INFO, "No filter: all %zu files", all);
	else if (p->n == 0)
		model_set_msg(&wb->m, ROLE_WARNING,
			      "No file name contains \"%s\": %s changes the filter", arg,
			      k[0] ? k : ":filter");
	else
		model_set_msg(&wb->m, ROLE_INFO, "Filter \"%s\": %zu of %zu files", arg, p->n,
			      all);
}

/* N (1-based), a member name, its base name, or its base name without the
 * extension; several matches are named, none is said. */
static void
act_select(struct wb *wb, const char *arg)
{
	size_t n_rows = model_n_rows(&wb->m);
	char *end;
	unsigned long n;
	size_t hit = SIZE_MAX, n_hits = 0;
	const char *unfiltered = " (the filter is cleared)";

	if (wants_prompt(wb, arg)) {
		ask(wb, REQ_SELECT, COMPLETE_WORDS, "Select (number or name): ", "");
		return;
	}
	n = strtoul(arg, &end, 10);
	if (*arg && !*end) {
		if (n >= 1 && n <= n_rows) {
			bool cleared = select_row(wb, n - 1);
			model_set_msg(&wb->m, ROLE_INFO, "Selected %lu: %s%s", n, sel_path(wb),
				      cleared ? unfiltered : "");
		} else {
			model_set_msg(&wb->m, ROLE_ERROR, "No file %s: the list has %zu", arg,
				      n_rows);
		}
		return;
	}
	for (int pass = 0; pass < 3 && n_hits == 0; pass++) {
		for (size_t r = 0; r < n_rows; r++) {
			const char *name = model_row_name(&wb->m, r), *base = tm_path_base(name);
			const char *dot = strrchr(base, '.');
			bool match = pass == 0   ? strcmp(name, arg) == 0
				     : pass == 1 ? strcmp(base, arg) == 0
						 : dot && (size_t)(dot - base) == strlen(arg) &&
							   strncmp(base, arg, strlen(arg)) == 0;
			if (match) {
				if (n_hits++ == 0)
					hit = r;
			}
		}
	}
	if (n_hits == 0) {
		model_set_msg(&wb->m, ROLE_ERROR, "No file named %s", arg);
	} else {
		bool cleared = select_row(wb, hit);
		if (n_hits > 1)
			model_set_msg(&wb->m, ROLE_WARNING,
				      "Selected %s, the first of %zu files that match %s%s",
				      sel_path(wb), n_hits, arg, cleared ? unfiltered : "");
		else
			model_set_msg(&wb->m, ROLE_INFO, "Selected %zu: %s%s", hit + 1,
				      sel_path(wb), cleared ? unfiltered : "");
	}
}

/* ---- machines ---- */

static void
act_machine(struct wb *wb, const char *arg)
{
	const char *path = sel_trace(wb);
	const struct tm_manifest_file *f = sel_file(wb);

	if (!path)
		return;
	if (!arg)
		ask(wb, REQ_MACHINE, COMPLETE_MACHINES, "Machine (Tab completes; Default clears): ",
		    f && f->machine_name ? f->machine_name : "");
	else
		model_set_machine(&wb->m, path, arg);
}

static void
act_add_machine(struct wb *wb, const char *arg)
{
	const char *path = sel_trace(wb);
	char *name = path ? model_add_machine(&wb->m, path) : NULL;

	(void)arg;
	if (name)
		ask(wb, REQ_RENAME_MACHINE, COMPLETE_MACHINES, "Rename machine: ", name);
	free(name);
}

/* Rename (merge) the selected file's machine to the answer, or, from a
 * :command, FROM TO. */
static void
rename_or_merge(struct wb *wb, const char *arg, enum wb_request req)
{
	bool merge = req == REQ_MERGE_MACHINE;
	const char *what = merge ? "Merged machine" : "Renamed machine";
	const struct tm_manifest_file *f = sel_file(wb);
	char *from = f && f->machine_name ? strdup(f->machine_name) : NULL;

	if (wb->ui.answering) {
		if (!from)
			msg(wb, ROLE_WARNING, "The file is on Default: nothing to rename");
		else if (!merge && !arg[strspn(arg, " \t")])
			msg(wb, ROLE_WARNING, "An empty name is treated as Default; not renamed");
		else if (*arg && strcmp(from, arg) != 0)
			model_rename_machine(&wb->m, from, arg, what);
	} else if (arg && *arg) {
		char a[256], b[256];
		if (sscanf(arg, "%255s %255[^\n]", a, b) == 2)
			model_rename_machine(&wb->m, a, b, what);
		else
			model_set_msg(&wb->m, ROLE_ERROR, "usage: %s FROM TO",
				      keymap_info(req)->name);
	} else if (!from) {
		model_set_msg(&wb->m, ROLE_WARNING, "The file is on Default: nothing to %s",
			      merge ? "merge" : "rename");
	} else if (merge) {
		ask(wb, req, COMPLETE_MACHINES, "Merge into machine: ", "");
	} else {
		ask(wb, req, COMPLETE_MACHINES, "Rename machine: ", from);
	}
	free(from);
}

static void
act_rename_machine(struct wb *wb, const char *arg)
{
	rename_or_merge(wb, arg, REQ_RENAME_MACHINE);
}

static void
act_merge_machine(struct wb *wb, const char *arg)
{
	rename_or_merge(wb, arg, REQ_MERGE_MACHINE);
}

static void
act_delete_machine(struct wb *wb, const char *arg)
{
	const struct tm_manifest_file *f = sel_file(wb);

	if (arg && *arg) {
		model_rename_machine(&wb->m, arg, NULL, "Deleted machine");
	} else if (f && f->machine_name) {
		char *nm = strdup(f->machine_name);
		model_rename_machine(&wb->m, nm, NULL, "Deleted machine");
		free(nm);
	} else {
		msg(wb, ROLE_WARNING, "The file is on Default: nothing to delete");
	}
}

static void
act_name_id(struct wb *wb, const char *arg)
{
	const char *path = sel_trace(wb);

	if (!path)
		return;
	if (wants_prompt(wb, arg))
		ask(wb, REQ_NAME_IDS, COMPLETE_WORDS, "Name embedded machine id (id=name): ", "");
	else
		model_name_id(&wb->m, path, arg);
}

/* ---- alignment ---- */

static void
act_auto(struct wb *wb, const char *arg)
{
	const char *path = sel_trace(wb);

	(void)arg;
	if (path)
		model_align_auto(&wb->m, path);
}

static void
act_offset(struct wb *wb, const char *arg)
{
	const char *path = sel_trace(wb);
	const struct tm_manifest_file *f = sel_file(wb);
	struct tm_error err;
	int64_t off;

	if (!path)
		return;
	if (wants_prompt(wb, arg)) {
		/* the prompt says what the offset is relative to: the entry's
		 * reference, or (placed automatically) where the file is now */
		struct tm_buf init, q;
		tm_buf_init(&init);
		tm_buf_init(&q);
		if (f && f->has_clocks) {
			tm_offset_format_ns(f->clocks.offset_ns, &init);
			tm_buf_addf(&q, "Offset vs %s (ns us ms s; + moves later): ",
				    f->clocks.sync_file ? f->clocks.sync_file : "its reference");
		} else if (!model_owns_timeline(&wb->m, path)) {
			tm_buf_addf(&q, "Move %s from where it is now (ns us ms s; + later): ", path);
		} else {
			tm_buf_adds(&q, "Offset (ns us ms s; + moves later): ");
		}
		ask(wb, REQ_OFFSET, COMPLETE_WORDS, q.data, init.data ? init.data : "");
		tm_buf_fini(&init);
		tm_buf_fini(&q);
		return;
	}
	tm_error_clear(&err);
	if (tm_parse_duration_ns(arg, &off, &err) != TM_OK) {
		model_set_msg(&wb->m, ROLE_ERROR,
			      "Enter an offset for %s such as 12ms or -1.5s (%s)", path,
			      err.msg);
		return;
	}
	model_set_offset(&wb->m, path, off, "Offset");
}

static void
act_ref(struct wb *wb, const char *arg)
{
	const char *path = sel_trace(wb);
	const struct tm_manifest_file *f = sel_file(wb);

	if (!path)
		return;
	if (wants_prompt(wb, arg))
		ask(wb, REQ_REF, COMPLETE_REF, "Reference FILE[:CLOCK][@MACHINE]: ",
		    f && f->has_clocks && f->clocks.sync_file ? f->clocks.sync_file : "");
	else if (*arg)
		model_set_ref(&wb->m, path, arg);
}

static void
act_clock(struct wb *wb, const char *arg)
{
	const char *path = sel_trace(wb);
	const struct tm_manifest_file *f = sel_file(wb);

	if (!path)
		return;
	if (!arg)
		ask(wb, REQ_CLOCK, COMPLETE_REF, "Own clock (REALTIME..BOOTTIME, empty = PIN): ",
		    f && f->has_clocks && f->clocks.clock ? tm_clock_name(f->clocks.clock) : "");
	else
		model_set_own_clock(&wb->m, path, arg);
}

static void
nudge(struct wb *wb, int64_t delta)
{
	const char *path = sel_trace(wb);

	if (path)
		model_nudge(&wb->m, path, delta);
}

static void
act_nudge_ms_down(struct wb *wb, const char *arg)
{
	(void)arg;
	nudge(wb, -1000000);
}

static void
act_nudge_ms_up(struct wb *wb, const char *arg)
{
	(void)arg;
	nudge(wb, 1000000);
}

static void
act_nudge_s_down(struct wb *wb, const char *arg)
{
	(void)arg;
	nudge(wb, -1000000000);
}

static void
act_nudge_s_up(struct wb *wb, const char *arg)
{
	(void)arg;
	nudge(wb, 1000000000);
}

static void
act_nudge_us_down(struct wb *wb, const char *arg)
{
	(void)arg;
	nudge(wb, -1000);
}

static void
act_nudge_us_up(struct wb *wb, const char *arg)
{
	(void)arg;
	nudge(wb, 1000);
}

/* ---- offsets from events, solve, fixes ---- */

static void
act_estimate(struct wb *wb, const char *arg)
{
	const char *path = sel_trace(wb);

	(void)arg;
	if (path)
		model_estimate(&wb->m, path);
}

static void
act_estimate_all(struct wb *wb, const char *arg)
{
	(void)arg;
	if (!wb->m.man_broken)
		model_estimate(&wb->m, NULL);
	else
		sel_trace(wb); /* says why not */
}

static void
act_fix(struct wb *wb, const char *arg)
{
	const char *path = sel_trace(wb);
	unsigned long k = 1;

	if (!path)
		return;
	if (arg && *arg) {
		char *e;
		k = strtoul(arg, &e, 10);
		if (*e || k == 0) {
			model_set_msg(&wb->m, ROLE_ERROR, "fix: expected a number (1 = the first fix)");
			return;
		}
	}
	model_apply_fix(&wb->m, path, k - 1);
}

static void
act_own_machine(struct wb *wb, const char *arg)
{
	const char *path = sel_trace(wb);

	(void)arg;
	if (path)
		model_own_machine(&wb->m, path);
}

static void
act_solve(struct wb *wb, const char *arg)
{
	(void)arg;
	if (wb->m.man_broken) {
		sel_trace(wb);
		return;
	}
	if (!model_solve(&wb->m))
		return;
	if (wb->m.solution.n_steps == 0) {
		model_set_msg(&wb->m, wb->m.solution.ok ? ROLE_OK : ROLE_WARNING,
			      "Solve: no edit to propose. %s%s%s", wb->m.solution.verdict,
			      wb->m.solution.unplaced ? " " : "",
			      wb->m.solution.unplaced ? wb->m.solution.unplaced : "");
		model_solve_answer(&wb->m, false);
		return;
	}
	wb->ui.help = true;
	wb->ui.messages = false;
	wb->ui.solve_view = true;
	wb->ui.pane[PANE_HELP].top = 0;
	char q[160];
	snprintf(q, sizeof q, "Apply this configuration as one edit (%s undoes)? (y/n) ",
		 model_key(&wb->m, REQ_UNDO));
	confirm(wb, CONFIRM_SOLVE, q);
}

/* ---- the pair picker ---- */

static void
picker_close(struct wb *wb)
{
	struct wb_picker *pk = &wb->ui.picker;

	tm_align_events_fini(&pk->ev);
	free(pk->file);
	free(pk->ref);
	free(pk->a_name);
	free(pk->b_name);
	memset(pk, 0, sizeof *pk);
	wb->ui.help = false;
}

/* Does hay contain needle, ignoring ASCII case? */
static bool
contains_nocase(const char *hay, const char *needle)
{
	size_t n = strlen(needle);
	for (; *hay; hay++)
		if (strncasecmp(hay, needle, n) == 0)
			return true;
	return n == 0;
}

bool
picker_shows(const struct wb_picker *pk, size_t i)
{
	return i < pk->ev.n && contains_nocase(pk->ev.v[i].name, pk->filter);
}

static size_t
picker_n_shown(const struct wb_picker *pk)
{
	size_t n = 0;
	for (size_t i = 0; i < pk->ev.n; i++)
		n += picker_shows(pk, i);
	return n;
}

/* The event index of the sel-th shown one, or SIZE_MAX. */
static size_t
picker_event(const struct wb_picker *pk)
{
	for (size_t i = 0, k = 0; i < pk->ev.n; i++)
		if (picker_shows(pk, i) && k++ == pk->sel)
			return i;
	return SIZE_MAX;
}

/* Load the events of the step's file (the reference for step 1). */
static bool
picker_load(struct wb *wb)
{
	struct wb_picker *pk = &wb->ui.picker;
	struct tm_error err;

	tm_align_events_fini(&pk->ev);
	pk->filter[0] = 0;
	pk->sel = 0;
	tm_error_clear(&err);
	if (tm_align_events(wb->m.s, pk->step ? pk->ref : pk->file, &pk->ev, &err) != TM_OK) {
		model_set_msg(&wb->m, ROLE_ERROR, "Pair: %s", err.msg);
		return false;
	}
	return true;
}

/* The next trace file after cur (not file itself), wrapping; NULL if none. */
static const char *
next_ref(struct wb *wb, const char *file, const char *cur)
{
	size_t n = model_n_rows(&wb->m), start = cur ? model_row_of(&wb->m, cur) : SIZE_MAX;

	for (size_t k = 1; k <= n; k++) {
		size_t row = start == SIZE_MAX ? k - 1 : (start + k) % n;
		const char *name = model_row_name(&wb->m, row);
		const struct tm_member *mb = tm_session_member(wb->m.s, model_row_member(&wb->m, row));
		if (name && strcmp(name, file) && text_member_is_trace(mb))
			return name;
	}
	return NULL;
}

static void
picker_pick(struct wb *wb)
{
	struct wb_picker *pk = &wb->ui.picker;
	size_t i = picker_event(pk);

	if (i == SIZE_MAX) {
		model_set_msg(&wb->m, ROLE_WARNING, "Pair: no event matches '%s'", pk->filter);
		return;
	}
	if (pk->step == 0) {
		pk->a_name = strdup(pk->ev.v[i].name);
		pk->a_occ = pk->ev.v[i].occ;
		pk->step = 1;
		picker_load(wb);
		/* the same name in the reference, when it has it, is the likely pick */
		for (size_t j = 0; j < pk->ev.n; j++)
			if (!strcmp(pk->ev.v[j].name, pk->a_name) &&
			    strlen(pk->a_name) < sizeof pk->filter) {
				snprintf(pk->filter, sizeof pk->filter, "%s", pk->a_name);
				break;
			}
		return;
	}
	pk->b_name = strdup(pk->ev.v[i].name);
	pk->b_occ = pk->ev.v[i].occ;
	pk->chosen = true;
	ask(wb, REQ_PAIR, COMPLETE_WORDS,
	    "Same moment: Enter.  Or B = A + d, d = (e.g. 3ms, -250us): ", "");
}

static void
picker_key(struct wb *wb, int key)
{
	struct wb_picker *pk = &wb->ui.picker;
	size_t n = picker_n_shown(pk), len = strlen(pk->filter);
	size_t page = pane_rows(&wb->ui.pane[PANE_HELP]) > 4 ? pane_rows(&wb->ui.pane[PANE_HELP]) - 3 : 1;

	if (key == 27 || key == WB_KEY_CTRL('c')) {
		picker_close(wb);
		msg(wb, ROLE_DIM, "Pair: cancelled");
	} else if (key == '\r' || key == '\n' || key == KEY_ENTER) {
		picker_pick(wb);
	} else if (key == KEY_DOWN || key == WB_KEY_CTRL('n')) {
		pk->sel = pk->sel + 1 < n ? pk->sel + 1 : pk->sel;
	} else if (key == KEY_UP || key == WB_KEY_CTRL('p')) {
		pk->sel = pk->sel ? pk->sel - 1 : 0;
	} else if (key == KEY_NPAGE) {
		pk->sel = pk->sel + page < n ? pk->sel + page : (n ? n - 1 : 0);
	} else if (key == KEY_PPAGE) {
		pk->sel = pk->sel > page ? pk->sel - page : 0;
	} else if (key == '\t' && pk->step == 1) {
		const char *r = next_ref(wb, pk->file, pk->ref);
		if (r && strcmp(r, pk->ref)) {
			free(pk->ref);
			pk->ref = strdup(r);
			picker_load(wb);
		}
	} else if (key == KEY_BACKSPACE || key == 127 || key == 8) {
		if (len)
			pk->filter[len - 1] = 0;
		pk->sel = 0;
	} else if (key == WB_KEY_CTRL('u')) {
		pk->filter[0] = 0;
		pk->sel = 0;
	} else if (key >= 32 && key < 256 && key != 127 && len + 1 < sizeof pk->filter) {
		pk->filter[len] = (char)key;
		pk->filter[len + 1] = 0;
		pk->sel = 0;
	}
}

static void
act_pair(struct wb *wb, const char *arg)
{
	struct wb_picker *pk = &wb->ui.picker;
	struct tm_align_pair p;
	struct tm_error err;

	if (wb->ui.answering && pk->chosen) {
		/* the picker's answer: d, empty for the same moment */
		int64_t d = 0;
		tm_error_clear(&err);
		if (*arg && tm_parse_duration_ns(arg, &d, &err) != TM_OK) {
			model_set_msg(&wb->m, ROLE_ERROR, "Pair: d: %s", err.msg);
			picker_close(wb);
			return;
		}
		memset(&p, 0, sizeof p);
		p.file = pk->file;
		p.name = pk->a_name;
		p.occ = pk->a_occ;
		p.ref = pk->ref;
		p.ref_name = pk->b_name;
		p.ref_occ = pk->b_occ;
		p.delta_ns = d;
		model_pair(&wb->m, &p);
		picker_close(wb);
		return;
	}
	if (arg && *arg) {
		/* :pair FILE:NAME[#N]=REF:NAME[#N][+D], the batch --pair grammar */
		tm_error_clear(&err);
		if (tm_align_pair_parse(arg, &p, &err) != TM_OK) {
			model_set_msg(&wb->m, ROLE_ERROR, "pair: %s", err.msg);
			return;
		}
		if (wb->m.man_broken)
			sel_trace(wb);
		else
			model_pair(&wb->m, &p);
		tm_align_pair_fini(&p);
		return;
	}
	const char *path = sel_trace(wb);
	if (!path)
		return;
	const char *ref = NULL;
	if (wb->m.rep && wb->m.rep->tt_file >= 0 && (size_t)wb->m.rep->tt_file < wb->m.rep->n_files)
		ref = model_member_name(&wb->m, wb->m.rep->files[wb->m.rep->tt_file].member);
	if (!ref || !strcmp(ref, path))
		ref = next_ref(wb, path, NULL);
	if (!ref) {
		msg(wb, ROLE_WARNING, "Pair: no other trace file to pair with");
		return;
	}
	picker_close(wb);
	pk->file = strdup(path);
	pk->ref = strdup(ref);
	if (!picker_load(wb)) {
		picker_close(wb);
		return;
	}
	pk->on = true;
	wb->ui.help = true;
	wb->ui.messages = false;
	wb->ui.solve_view = false;
}

static void
act_trace_time(struct wb *wb, const char *arg)
{
	const struct tm_manifest *man = &wb->m.man;

	if (!arg)
		ask(wb, REQ_TRACE_TIME, COMPLETE_WORDS,
		    "Timeline clock CLOCK [FILE [MACHINE]] or auto: ",
		    man->has_trace_time && man->tt_clock ? tm_clock_name(man->tt_clock) : "");
	else
		model_set_trace_time(&wb->m, arg);
}

static void
act_baseline(struct wb *wb, const char *arg)
{
	const char *path = sel_trace(wb);

	(void)arg;
	if (!path)
		return;
	free(wb->m.baseline);
	wb->m.baseline = strdup(path);
	model_set_msg(&wb->m, ROLE_INFO, "Baseline: %s (new offsets are relative to it)", path);
}

static void
act_attr(struct wb *wb, const char *arg)
{
	if (wants_prompt(wb, arg))
		ask(wb, REQ_ATTR, COMPLETE_WORDS, "Attribute key=value: ", "");
	else
		model_set_attr(&wb->m, arg);
}

static void
act_undo(struct wb *wb, const char *arg)
{
	(void)arg;
	model_undo(&wb->m, true);
}

static void
act_redo(struct wb *wb, const char *arg)
{
	(void)arg;
	model_undo(&wb->m, false);
}

/* ---- output ---- */

static void
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
	} else if (st == TM_OK) {
		out_save_manifest(wb, path, false);
	}
}

static void
act_save_manifest(struct wb *wb, const char *arg)
{
	if (wants_prompt(wb, arg))
		ask(wb, REQ_SAVE_MANIFEST, COMPLETE_FILES, "Save manifest to: ",
		    "perfetto_manifest.json");
	else
		write_or_ask(wb, REQ_SAVE_MANIFEST, *arg ? arg : "perfetto_manifest.json");
}

static void
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

static void
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

static void
act_remove_file(struct wb *wb, const char *arg)
{
	(void)arg;
	if (sel_path(wb))
		model_remove_row(&wb->m, sel_row(wb));
}

static void
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

static void
act_move_earlier(struct wb *wb, const char *arg)
{
	(void)arg;
	move_file(wb, -1);
}

static void
act_move_later(struct wb *wb, const char *arg)
{
	(void)arg;
	move_file(wb, 1);
}

static void
act_rescan(struct wb *wb, const char *arg)
{
	(void)arg;
	if (wb->m.s || wb->m.n_paths)
		model_rescan(&wb->m);
}

static void
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

static void
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

static void
act_print_on_exit(struct wb *wb, const char *arg)
{
	(void)arg;
	wb->m.print_manifest_on_exit = true;
	msg(wb, ROLE_INFO, "The manifest will be printed on exit");
}

static void
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

/* ---- view ---- */

/* Zooming keeps the selected file in view: the window is centred on it
 * (the layout clamps the window to the range). */
static void
anchor_at_selection(struct wb *wb)
{
	size_t row = list_sel_row(&wb->ui);
	const struct tm_report_file *rf = row == SIZE_MAX ? NULL : model_row_file(&wb->m, row);
	const struct wb_tl_view *v = &wb->fr.tl;
	if (!rf || !rf->has_ts || !(v->full > 0))
		return;
	double mid = ((double)rf->first_ts + (double)rf->last_ts) / 2.0;
	wb->ui.tl_center = (mid - v->lo) / v->full;
}

static void
act_zoom_in(struct wb *wb, const char *arg)
{
	(void)arg;
	anchor_at_selection(wb);
	if (wb->ui.zoom < 40)
		wb->ui.zoom++;
}

static void
act_zoom_out(struct wb *wb, const char *arg)
{
	(void)arg;
	anchor_at_selection(wb);
	if (wb->ui.zoom > 0)
		wb->ui.zoom--;
}

/* A quarter of the window per step; at 1x there is nowhere to go. */
static void
pan(struct wb *wb, double dir)
{
	const struct wb_tl_view *v = &wb->fr.tl;
	if (wb->ui.zoom == 0 || !(v->full > 0)) {
		model_set_msg(&wb->m, ROLE_INFO, "The whole timeline is in view: zoom in (+) to pan");
		return;
	}
	wb->ui.tl_center = v->center + dir * v->span / v->full / 4.0;
}

/* In the manifest (focused): sideways, half its width a step (the frame
 * clamps it to the longest line). */
static bool
manifest_sideways(struct wb *wb, int dir)
{
	struct pane *p = &wb->ui.pane[PANE_MANIFEST];
	size_t step = p->w > 8 ? (size_t)p->w / 2 : 4;

	if (!wb->ui.focus_manifest)
		return false;
	if (dir < 0)
		p->left = p->left > step ? p->left - step : 0;
	else
		p->left += step;
	return true;
}

static void
act_pan_left(struct wb *wb, const char *arg)
{
	(void)arg;
	if (!manifest_sideways(wb, -1))
		pan(wb, -1.0);
}

static void
act_pan_right(struct wb *wb, const char *arg)
{
	(void)arg;
	if (!manifest_sideways(wb, 1))
		pan(wb, 1.0);
}

static void
act_cancel_scan(struct wb *wb, const char *arg)
{
	(void)arg;
	model_scan_cancel(&wb->m);
}

static void
act_help(struct wb *wb, const char *arg)
{
	(void)arg;
	wb->ui.help = !wb->ui.help || wb->ui.messages;
	wb->ui.messages = false;
	wb->ui.pane[PANE_HELP].top = 0;
}

static void
act_messages(struct wb *wb, const char *arg)
{
	(void)arg;
	wb->ui.help = !(wb->ui.help && wb->ui.messages);
	wb->ui.messages = wb->ui.help;
	/* The newest at the bottom: start at the end. */
	wb->ui.pane[PANE_HELP].top = SIZE_MAX / 2;
}

static void
act_prompt(struct wb *wb, const char *arg)
{
	if (wb->ui.answering)
		actions_command(wb, arg);
	else
		ask(wb, REQ_PROMPT, COMPLETE_COMMANDS, ":", "");
}

static void
act_mouse(struct wb *wb, const char *arg)
{
	char k[32];

	(void)arg;
	wb->ui.mouse = !wb->ui.mouse;
	keymap_key_name(keymap_key_of(REQ_MOUSE), k, sizeof k);
	if (wb->ui.mouse)
		model_set_msg(&wb->m, ROLE_INFO,
			      "Mouse on: a click selects, the wheel scrolls; %s: off, to select text",
			      k);
	else
		model_set_msg(&wb->m, ROLE_INFO, "Mouse off: the terminal selects text; %s: mouse on",
			      k);
}

static void
act_redraw(struct wb *wb, const char *arg)
{
	(void)arg;
	wb->ui.redraw_all = true;
}

static void
act_quit(struct wb *wb, const char *arg)
{
	(void)arg;
	if (model_is_dirty(&wb->m))
		confirm(wb, CONFIRM_QUIT, "Edits are not written. Quit anyway? (y/n) ");
	else
		wb->run.quit = true;
}

static void
act_quit_now(struct wb *wb, const char *arg)
{
	(void)arg;
	wb->run.quit = true;
}

/* set, color, bind, source, theme: the config syntax, typed. */
static void
act_config(struct wb *wb, const char *arg)
{
	(void)arg;
	(void)wb; /* actions_command passes the whole line to the config parser */
}

/* ---- dispatch ---- */

static void answer_recovery(struct wb *wb, int answer);

static void
answer(struct wb *wb, enum wb_request req, enum wb_confirm c, const char *line)
{
	if (c != CONFIRM_NONE) {
		bool yes = line[0] == 'y' || line[0] == 'Y';
		if (c == CONFIRM_QUIT && yes) {
			wb->run.quit = true;
		} else if (c == CONFIRM_OVERWRITE && yes && wb->ui.pending_write) {
			if (wb->ui.pending_req == REQ_WRITE)
				out_write_tar(wb, wb->ui.pending_write, true);
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
