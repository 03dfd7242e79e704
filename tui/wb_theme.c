/* SPDX-License-Identifier: MIT */
/*
 * Key map (from the request table), style roles and the one config syntax:
 *   color <role> <fg> <bg> [bold|dim|underline|reverse|italic|standout]...
 *   set <key> = <value>        (theme, ascii, print-manifest-on-exit, zoom)
 *   bind <generic|main> <key> <request>
 *   source <file>
 * Themes are files of color lines (themes/NAME.theme).  NO_COLOR or a terminal
 * without colours gives built-in monochrome roles and no start_color().
 */
#include <curses.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "wb.h"

/* ---- key map ---- */

static const struct wb_request_info req_info[] = {
	{REQ_NONE, "none", 0, 0, ""},
#define WB_X_(id, name, k1, k2, help) {id, name, k1, k2, help},
	WB_REQ_LIST(WB_X_)
#undef WB_X_
};

struct binding {
	int key;
	enum wb_request req;
};
static struct binding user_binds[64];
static size_t n_user_binds;

const struct wb_request_info *
keymap_info(enum wb_request r)
{
	if ((int)r <= REQ_NONE || r >= REQ__COUNT)
		return &req_info[0];
	return &req_info[r];
}

enum wb_request
keymap_lookup(int key)
{
	for (size_t i = n_user_binds; i-- > 0;)
		if (user_binds[i].key == key)
			return user_binds[i].req;
	for (int r = REQ_NONE + 1; r < REQ__COUNT; r++)
		if (key && (req_info[r].key1 == key || req_info[r].key2 == key))
			return (enum wb_request)r;
	if (key == '\n' || key == '\r' || key == KEY_ENTER)
		return REQ_NONE;
	return REQ_NONE;
}

enum wb_request
keymap_by_name(const char *name)
{
	for (int r = REQ_NONE + 1; r < REQ__COUNT; r++)
		if (strcmp(req_info[r].name, name) == 0)
			return (enum wb_request)r;
	return REQ_NONE;
}

static const struct {
	const char *name;
	int key;
} key_names[] = {
	{"Enter", '\r'},       {"Esc", 27},          {"Tab", '\t'},        {"Up", KEY_UP},
	{"Down", KEY_DOWN},    {"Left", KEY_LEFT},   {"Right", KEY_RIGHT}, {"Home", KEY_HOME},
	{"End", KEY_END},      {"BS", KEY_BACKSPACE}, {"Backspace", KEY_BACKSPACE},
	{"Del", KEY_DC},       {"PgUp", KEY_PPAGE},  {"PgDn", KEY_NPAGE},   {"PgDown", KEY_NPAGE}, {"Space", ' '},
	{"Lt", '<'},           {"Gt", '>'},
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

bool
keymap_bind(const char *key_spec, const char *req_name)
{
	size_t used;
	int key = keymap_parse_key(key_spec, &used);
	enum wb_request r = keymap_by_name(req_name);

	if (!key || used != strlen(key_spec) || r == REQ_NONE ||
	    n_user_binds >= sizeof user_binds / sizeof user_binds[0])
		return false;
	user_binds[n_user_binds++] = (struct binding){key, r};
	return true;
}

/* ---- roles ---- */

static const char *const role_names[] = {
#define WB_X_(id, name) name,
	WB_ROLE_LIST(WB_X_)
#undef WB_X_
};

static int role_attr[ROLE__COUNT];
static short role_fg[ROLE__COUNT], role_bg[ROLE__COUNT];
static int role_extra[ROLE__COUNT];
static bool colors_on;

const char *
theme_role_name(enum wb_role r)
{
	return (unsigned)r < ROLE__COUNT ? role_names[r] : "?";
}

int
theme_attr(enum wb_role role)
{
	return (unsigned)role < ROLE__COUNT ? role_attr[role] : (int)A_NORMAL;
}

static void
mono_roles(void)
{
	for (int i = 0; i < ROLE__COUNT; i++)
		role_attr[i] = A_NORMAL;
	role_attr[ROLE_TITLE] = A_BOLD | A_REVERSE;
	role_attr[ROLE_STATUS] = A_BOLD;
	role_attr[ROLE_CURSOR] = A_REVERSE;
	role_attr[ROLE_CURSOR_BLUR] = A_UNDERLINE;
	role_attr[ROLE_HEADER] = A_BOLD;
	role_attr[ROLE_KEY_HINT] = A_REVERSE;
	role_attr[ROLE_DIM] = A_DIM;
	role_attr[ROLE_ESCAPE] = A_UNDERLINE;
	role_attr[ROLE_ERROR] = A_BOLD;
	role_attr[ROLE_WARNING] = A_BOLD;
	role_attr[ROLE_OK] = A_NORMAL;
	role_attr[ROLE_BAR] = A_NORMAL;
	role_attr[ROLE_DROPPED] = A_BOLD;
	role_attr[ROLE_ZERO] = A_BOLD;
	role_attr[ROLE_CHANGED] = A_BOLD;
}

static int
parse_color(const char *s, bool *ok)
{
	static const char *const names[] = {"black", "red",     "green", "yellow",
					    "blue",  "magenta", "cyan",  "white"};
	*ok = true;
	if (strcmp(s, "default") == 0)
		return -1;
	for (int i = 0; i < 8; i++) {
		if (strcmp(s, names[i]) == 0)
			return i;
		if (strncmp(s, "bright-", 7) == 0 && strcmp(s + 7, names[i]) == 0)
			return COLORS >= 16 ? i + 8 : i;
	}
	if (strncmp(s, "color", 5) == 0 && s[5]) {
		int n = atoi(s + 5);
		return n < COLORS ? n : n % 8;
	}
	if (s[0] == '#' && strlen(s) == 7) {
		long v = strtol(s + 1, NULL, 16);
		int r = (int)(v >> 16) & 255, g = (int)(v >> 8) & 255, b = (int)v & 255;
		if (COLORS >= 256) /* the xterm 6x6x6 cube */
			return 16 + 36 * ((r * 5 + 127) / 255) + 6 * ((g * 5 + 127) / 255) +
			       (b * 5 + 127) / 255;
		return ((r > 127) ? 1 : 0) | ((g > 127) ? 2 : 0) | ((b > 127) ? 4 : 0);
	}
	*ok = false;
	return -1;
}

static void
apply_role(int r)
{
	if (!colors_on)
		return;
	init_pair((short)(r + 1), role_fg[r], role_bg[r]);
	role_attr[r] = COLOR_PAIR(r + 1) | role_extra[r];
}

static bool
color_line(char **tok, int n, char *err, size_t err_len)
{
	int r, extra = 0;
	bool ok1, ok2;
	int fg, bg;

	if (n < 4) {
		snprintf(err, err_len, "color: expected color <role> <fg> <bg> [attrs]");
		return false;
	}
	for (r = 0; r < ROLE__COUNT; r++)
		if (strcmp(role_names[r], tok[1]) == 0)
			break;
	if (r == ROLE__COUNT) {
		snprintf(err, err_len, "color: unknown role '%s'", tok[1]);
		return false;
	}
	fg = parse_color(tok[2], &ok1);
	bg = parse_color(tok[3], &ok2);
	if (!ok1 || !ok2) {
		snprintf(err, err_len, "color: unknown colour '%s'", !ok1 ? tok[2] : tok[3]);
		return false;
	}
	for (int i = 4; i < n; i++) {
		if (strcmp(tok[i], "bold") == 0)
			extra |= A_BOLD;
		else if (strcmp(tok[i], "dim") == 0)
			extra |= A_DIM;
		else if (strcmp(tok[i], "underline") == 0)
			extra |= A_UNDERLINE;
		else if (strcmp(tok[i], "reverse") == 0)
			extra |= A_REVERSE;
		else if (strcmp(tok[i], "standout") == 0)
			extra |= A_STANDOUT;
		else if (strcmp(tok[i], "italic") == 0)
			extra |= A_ITALIC;
		else if (strcmp(tok[i], "normal") != 0) {
			snprintf(err, err_len, "color: unknown attribute '%s'", tok[i]);
			return false;
		}
	}
	role_fg[r] = (short)fg;
	role_bg[r] = (short)bg;
	role_extra[r] = extra;
	if (colors_on)
		apply_role(r);
	else if (extra & (A_BOLD | A_UNDERLINE | A_REVERSE))
		role_attr[r] = extra; /* monochrome keeps the attributes */
	return true;
}

static const char *const builtin_theme[] = {
	"color default default default",
	"color title white blue bold",
	"color status default default bold",
	"color cursor black cyan",
	"color cursor-blur default default underline",
	"color header yellow default bold",
	"color key-hint black white",
	"color dim default default dim",
	"color escape magenta default underline",
	"color diag-error red default bold",
	"color diag-warning yellow default bold",
	"color diag-info cyan default",
	"color diag-ok green default bold",
	"color clock cyan default",
	"color machine green default",
	"color timeline-bar blue default",
	"color timeline-dropped red default bold",
	"color timeline-zero yellow default bold",
	"color offset-changed magenta default bold",
};

static bool load_theme_named(struct wb *wb, const char *name);

bool
theme_config_line(struct wb *wb, const char *line, char *err, size_t err_len)
{
	char buf[1024], *tok[16], *save = NULL;
	int n = 0;

	snprintf(buf, sizeof buf, "%s", line);
	buf[strcspn(buf, "#\r\n")] = 0;
	for (char *t = strtok_r(buf, " \t", &save); t && n < 16; t = strtok_r(NULL, " \t", &save))
		tok[n++] = t;
	if (n == 0)
		return true;
	if (strcmp(tok[0], "color") == 0)
		return color_line(tok, n, err, err_len);
	if (strcmp(tok[0], "theme") == 0 && n == 2)
		return load_theme_named(wb, tok[1]) ||
		       (snprintf(err, err_len, "theme: cannot load '%s'", tok[1]), false);
	if (strcmp(tok[0], "bind") == 0) {
		if (n != 4 || !keymap_bind(tok[2], tok[3])) {
			snprintf(err, err_len, "bind: expected bind <keymap> <key> <request>");
			return false;
		}
		return true;
	}
	if (strcmp(tok[0], "source") == 0 && n == 2)
		return theme_load_file(wb, tok[1], false);
	if (strcmp(tok[0], "set") == 0 && n >= 4 && strcmp(tok[2], "=") == 0) {
		bool yes = strcmp(tok[3], "yes") == 0 || strcmp(tok[3], "true") == 0 ||
			   strcmp(tok[3], "1") == 0;
		if (strcmp(tok[1], "theme") == 0)
			return load_theme_named(wb, tok[3]) ||
			       (snprintf(err, err_len, "set theme: cannot load '%s'", tok[3]),
				false);
		if (strcmp(tok[1], "ascii") == 0 || strcmp(tok[1], "line-graphics") == 0) {
			wb->ascii = strcmp(tok[1], "ascii") == 0 ? yes : strcmp(tok[3], "ascii") == 0;
			return true;
		}
		if (strcmp(tok[1], "print-manifest-on-exit") == 0) {
			wb->print_manifest_on_exit = yes;
			return true;
		}
		if (strcmp(tok[1], "zoom") == 0) {
			wb->zoom = atoi(tok[3]);
			return true;
		}
		snprintf(err, err_len, "set: unknown setting '%s'", tok[1]);
		return false;
	}
	snprintf(err, err_len, "unknown command '%s'", tok[0]);
	return false;
}

bool
theme_load_file(struct wb *wb, const char *path, bool quiet)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	int lineno = 0;

	if (!f) {
		if (!quiet)
			wb_set_msg(wb, ROLE_ERROR, "tracemerge warning: %s: cannot open", path);
		return false;
	}
	while (fgets(line, sizeof line, f)) {
		char err[256];
		lineno++;
		if (!theme_config_line(wb, line, err, sizeof err))
			wb_set_msg(wb, ROLE_ERROR, "tracemerge warning: %s:%d: %s", path, lineno, err);
	}
	fclose(f);
	return true;
}

static bool
load_theme_named(struct wb *wb, const char *name)
{
	char path[PATH_MAX * 2 + 64], exe[PATH_MAX];
	const char *dir = getenv("TM_THEME_DIR");
	ssize_t n;

	if (strchr(name, '/'))
		return theme_load_file(wb, name, false);
	if (dir && *dir) {
		snprintf(path, sizeof path, "%s/%s.theme", dir, name);
		if (access(path, R_OK) == 0)
			return theme_load_file(wb, path, false);
	}
	/* Next to the binary (build/<mode>/tracemerge -> themes/), then installed. */
	n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = 0;
		char *slash = strrchr(exe, '/');
		if (slash)
			*slash = 0;
		static const char *const rel[] = {"/../../themes", "/../themes",
						  "/../share/tracemerge/themes"};
		for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
			snprintf(path, sizeof path, "%s%s/%s.theme", exe, rel[i], name);
			if (access(path, R_OK) == 0)
				return theme_load_file(wb, path, false);
		}
	}
	snprintf(path, sizeof path, "themes/%s.theme", name);
	if (access(path, R_OK) == 0)
		return theme_load_file(wb, path, false);
	if (strcmp(name, "default") == 0) {
		char err[128];
		for (size_t i = 0; i < sizeof builtin_theme / sizeof builtin_theme[0]; i++)
			theme_config_line(wb, builtin_theme[i], err, sizeof err);
		return true;
	}
	return false;
}

void
theme_init(struct wb *wb)
{
	const char *nc = getenv("NO_COLOR");
	char err[128];

	mono_roles();
	wb->mono = (nc && *nc) || !has_colors();
	colors_on = false;
	if (!wb->mono) {
		start_color();
		use_default_colors();
		colors_on = COLOR_PAIRS > ROLE__COUNT;
	}
	for (size_t i = 0; i < sizeof builtin_theme / sizeof builtin_theme[0]; i++)
		theme_config_line(wb, builtin_theme[i], err, sizeof err);
	if (wb->mono)
		mono_roles();
	if (wb->theme_name && !load_theme_named(wb, wb->theme_name))
		wb_set_msg(wb, ROLE_ERROR, "tracemerge warning: theme '%s' not found",
			   wb->theme_name);
}
