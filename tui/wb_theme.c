/* SPDX-License-Identifier: MIT */
/*
 * Style roles and colours: "color <role> <fg> <bg> [attrs]" lines (the
 * config and theme files' colour syntax), colours by name, colorN or
 * #rrggbb (nearest in the 256-colour cube, else the 8 basic ones), the
 * built-in theme, and where a named theme's file is found.  NO_COLOR or a
 * terminal without colours gives built-in monochrome roles and no
 * start_color().
 */
#include <curses.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wb.h"

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

bool
theme_color(char **tok, int n, char *err, size_t err_len)
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

void
theme_builtin(void)
{
	char buf[128], *tok[8], *save = NULL, err[128];

	for (size_t i = 0; i < sizeof builtin_theme / sizeof builtin_theme[0]; i++) {
		int n = 0;
		snprintf(buf, sizeof buf, "%s", builtin_theme[i]);
		for (char *t = strtok_r(buf, " ", &save); t && n < 8; t = strtok_r(NULL, " ", &save))
			tok[n++] = t;
		theme_color(tok, n, err, sizeof err);
	}
}

bool
theme_find(const char *name, char *path, size_t len)
{
	char exe[PATH_MAX];
	const char *dir = getenv("TM_THEME_DIR");
	ssize_t n;

	if (strchr(name, '/')) {
		snprintf(path, len, "%s", name);
		return true;
	}
	if (dir && *dir) {
		snprintf(path, len, "%s/%s.theme", dir, name);
		if (access(path, R_OK) == 0)
			return true;
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
			snprintf(path, len, "%s%s/%s.theme", exe, rel[i], name);
			if (access(path, R_OK) == 0)
				return true;
		}
	}
	snprintf(path, len, "themes/%s.theme", name);
	return access(path, R_OK) == 0;
}

bool
theme_init(void)
{
	const char *nc = getenv("NO_COLOR");
	bool mono = (nc && *nc) || !has_colors();

	mono_roles();
	colors_on = false;
	if (!mono) {
		start_color();
		use_default_colors();
		colors_on = COLOR_PAIRS > ROLE__COUNT;
	}
	theme_builtin();
	if (mono)
		mono_roles();
	return mono;
}
