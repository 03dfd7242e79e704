/* SPDX-License-Identifier: MIT */
/*
 * Workbench entry point and event loop: argument handling, the demo's
 * files, terminal setup (a real tty or TM_HEADLESS newterm on /dev/null),
 * the loop (poll the scan, prepare and draw a frame, read a key), the
 * scripted test mode (TM_SCRIPT / --script: keys and :commands consumed only
 * at the idle point, plus the harness commands :dump-screen, :resize,
 * :raise, :click, :wheel, :unlink, :details), signals and the recovery manifest on
 * the way out.
 */
#include "workbench.h"

#include <curses.h>
#include <errno.h>
#include <langinfo.h>
#include <limits.h>
#include <locale.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "wb.h"

volatile sig_atomic_t wb_got_signal;

/* ---- terminal ---- */

static void
term_setup(struct wb *wb)
{
	SCREEN *scr;

	if (wb->run.headless) {
		wb->run.null_out = fopen("/dev/null", "w");
		wb->run.null_in = fopen("/dev/null", "r");
		scr = newterm(getenv("TERM") && *getenv("TERM") ? getenv("TERM") : "xterm-256color",
			      wb->run.null_out, wb->run.null_in);
		if (!scr)
			scr = newterm("xterm", wb->run.null_out, wb->run.null_in);
		if (!scr) {
			fprintf(stderr, "tracemerge: cannot initialise a headless terminal\n");
			exit(2);
		}
		set_term(scr);
		wb->run.tty_out = NULL;
	} else {
		initscr();
		wb->run.tty_out = stdout;
	}
	raw();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	set_escdelay(getenv("ESCDELAY") ? atoi(getenv("ESCDELAY")) : 25);
	curs_set(0);
	wb->ui.mono = theme_init();
}

/* The terminal reports the mouse while ui.mouse asks for it (the key and
 * the config option only set the flag; the terminal is this file's). */
static bool mouse_on;

static void
term_mouse(struct wb *wb)
{
	if (wb->ui.mouse == mouse_on)
		return;
	mouse_on = wb->ui.mouse;
	mouseinterval(0); /* presses as they come, no click timing */
	mousemask(mouse_on ? BUTTON1_PRESSED | BUTTON1_CLICKED | BUTTON4_PRESSED | BUTTON5_PRESSED
			   : 0,
		  NULL);
}

/* A KEY_MOUSE from curses, decoded: the wheel or a left press or click
 * (*y, *x where); false for none of these. */
static bool
term_mouse_read(enum wb_mouse *what, int *y, int *x)
{
	MEVENT ev;

	if (getmouse(&ev) != OK)
		return false;
	if (ev.bstate & BUTTON4_PRESSED)
		*what = MOUSE_WHEEL_UP;
	else if (ev.bstate & BUTTON5_PRESSED)
		*what = MOUSE_WHEEL_DOWN;
	else if (ev.bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED))
		*what = MOUSE_CLICK;
	else
		return false;
	*y = ev.y;
	*x = ev.x;
	return true;
}

static void
term_mouse_event(struct wb *wb)
{
	enum wb_mouse what;
	int y, x;

	if (term_mouse_read(&what, &y, &x))
		actions_mouse(wb, what, y, x);
}

static void
draw_now(struct wb *wb)
{
	browse_refresh(wb);
	frame_prepare(wb);
	if (wb->ui.redraw_all && !wb->run.headless)
		clearok(curscr, TRUE);
	wb->ui.redraw_all = false;
	view_draw(wb);
	if (!wb->run.headless)
		doupdate();
}

/* An opening shorter than this draws nothing of its own (a reopen after
 * an edit keeps the screen it had); a longer one draws the opening screen
 * this often, and at once after a key. */
#define OPEN_FIRST_MS 150
#define OPEN_EVERY_MS 100

static long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* model_open's poll while an archive is being opened: SIGTERM, SIGHUP,
 * q, Q and Ctrl-C (a key in raw mode) cancel it; a key quits as well.
 * Meanwhile the opening screen shows the members found so far. */
static bool
open_poll(void *ud)
{
	struct wb *wb = ud;
	struct wb_opening *o = &wb->ui.opening;

	if (wb_got_signal)
		return true;
	if (wb->run.headless) {
		nanosleep(&(struct timespec){0, 5 * 1000 * 1000}, NULL);
		return false;
	}
	if (o->gen != wb->m.open_gen) { /* a new opening */
		memset(o, 0, sizeof *o);
		o->gen = wb->m.open_gen;
		o->follow = true;
		o->t0_ms = now_ms();
	}
	timeout(50);
	int key = getch();
	if (key == 'q' || key == 'Q' || key == 3) {
		wb->run.quit = true;
		return true;
	}
	if (key == KEY_MOUSE) { /* the wheel moves; clicks wait for the list */
		enum wb_mouse what;
		int y, x;
		key = !term_mouse_read(&what, &y, &x) ? ERR
		      : what == MOUSE_WHEEL_UP	      ? KEY_UP
		      : what == MOUSE_WHEEL_DOWN      ? KEY_DOWN
						      : ERR;
	}
	bool now = key != ERR && actions_opening_key(wb, key);
	long t = now_ms() - o->t0_ms;
	if (t >= OPEN_FIRST_MS && (now || t - o->drawn_ms >= OPEN_EVERY_MS || !o->drawn_ms)) {
		model_open_refresh(&wb->m);
		actions_opening_clamp(wb);
		if (wb->ui.redraw_all)
			clearok(curscr, TRUE);
		wb->ui.redraw_all = false;
		view_draw_opening(wb);
		doupdate();
		o->drawn_ms = t;
	}
	return false;
}

static void
on_signal(int sig)
{
	wb_got_signal = sig;
}

static void
install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* Before the terminal is set up: ncurses installs its own SIGINT
	 * handler (exit, nothing saved) only where the disposition is still
	 * the default.  Each of these saves the unsaved edits on the way out. */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
}

/* ---- scripted input ---- */

static int keyq[4096];
static size_t keyq_head, keyq_len;

static void
keyq_push(int k)
{
	if (keyq_len < sizeof keyq / sizeof keyq[0])
		keyq[(keyq_head + keyq_len++) % (sizeof keyq / sizeof keyq[0])] = k;
}

static int
keyq_pop(void)
{
	int k = keyq[keyq_head];

	keyq_head = (keyq_head + 1) % (sizeof keyq / sizeof keyq[0]);
	keyq_len--;
	return k;
}

/* Test-harness commands (not actions: they work even while a prompt is
 * open): :dump-screen [--roles] FILE, :resize ROWSxCOLS, :raise [HUP|INT|QUIT],
 * :click ROW COL, :wheel up|down ROW COL, :unlink FILE, :details hold|stall|go,
 * :details count FILE, :wait.
 * Returns false for any other line. */
static bool
harness_command(struct wb *wb, const char *line)
{
	if (strncmp(line, ":dump-screen", 12) == 0 && (line[12] == ' ' || !line[12])) {
		const char *args = line + 12 + strspn(line + 12, " ");
		bool roles = strncmp(args, "--roles", 7) == 0 && (args[7] == ' ' || !args[7]);
		if (roles)
			args += 7 + strspn(args + 7, " ");
		browse_refresh(wb);
		frame_prepare(wb);
		if (!view_dump_screen(wb, *args ? args : "screen.txt", roles))
			model_set_msg(&wb->m, ROLE_ERROR, "dump-screen: cannot open %s", args);
		return true;
	}
	if (strncmp(line, ":resize ", 8) == 0) {
		int rows = 0, cols = 0;
		if (sscanf(line + 8, "%dx%d", &rows, &cols) == 2 && rows > 0 && cols > 0) {
			resizeterm(rows, cols);
			if (wb->ui.prompting)
				actions_key(wb, KEY_RESIZE);
		}
		return true;
	}
	if (strncmp(line, ":raise", 6) == 0) {
		/* Deliver SIGTERM (default), SIGHUP, SIGINT or SIGQUIT to
		 * ourselves (the recovery path). */
		const char *n = line + 6 + strspn(line + 6, " ");
		raise(!strcmp(n, "HUP")	   ? SIGHUP
		      : !strcmp(n, "INT")  ? SIGINT
		      : !strcmp(n, "QUIT") ? SIGQUIT
					   : SIGTERM);
		return true;
	}
	if (strncmp(line, ":click ", 7) == 0 || strncmp(line, ":wheel ", 7) == 0) {
		/* :click ROW COL, :wheel up|down ROW COL: what the terminal's
		 * mouse reports (0-based cells), when the mouse is on. */
		char dir[8] = "";
		int y = -1, x = -1;
		if (line[1] == 'c' && sscanf(line + 7, "%d %d", &y, &x) == 2)
			actions_mouse(wb, MOUSE_CLICK, y, x);
		else if (line[1] == 'w' && sscanf(line + 7, "%7s %d %d", dir, &y, &x) == 3)
			actions_mouse(wb, strcmp(dir, "up") == 0 ? MOUSE_WHEEL_UP : MOUSE_WHEEL_DOWN,
				      y, x);
		return true;
	}
	if (strncmp(line, ":unlink ", 8) == 0) {
		/* A file vanishes under the session (a reopen must keep it). */
		if (unlink(line + 8) != 0)
			model_set_msg(&wb->m, ROLE_ERROR, "unlink %s: %s", line + 8, strerror(errno));
		return true;
	}
	if (strcmp(line, ":details hold") == 0 || strcmp(line, ":details go") == 0) {
		/* hold: no per-event details are computed (the screen keeps
		 * saying so, for a golden of that state); go: as usual */
		model_details_hold(&wb->m, line[9] == 'h');
		return true;
	}
	if (strcmp(line, ":details stall") == 0) {
		/* the next thread started waits before it evaluates, until
		 * :details go (a test of its cancel: details-computing) */
		model_details_stall(&wb->m);
		return true;
	}
	if (strncmp(line, ":help count ", 12) == 0) {
		/* the lines the last frame built for the help pane (the
		 * picker formats only its window: picker-window), and the
		 * times the picker ran its filter over the events (once per
		 * filter, not per frame) */
		FILE *f = fopen(line + 12, "w");
		if (!f) {
			model_set_msg(&wb->m, ROLE_ERROR, "help count: cannot open %s", line + 12);
			return true;
		}
		fprintf(f, "lines %zu\nfiltered %u\n", wb->fr.n_help, wb->ui.picker.n_filtered);
		fclose(f);
		return true;
	}
	if (strncmp(line, ":details count ", 15) == 0) {
		const struct wb_details *d = &wb->m.det;
		FILE *f = fopen(line + 15, "w");
		if (!f) {
			model_set_msg(&wb->m, ROLE_ERROR, "details count: cannot open %s", line + 15);
			return true;
		}
		fprintf(f, "started %u cancelled %u discarded %u shown %u\n", d->n_started,
			d->n_cancelled, d->n_discarded, d->n_shown);
		fclose(f);
		return true;
	}
	if (strcmp(line, ":wait") == 0 || strcmp(line, ":idle") == 0)
		return true; /* script steps already run only at the idle point */
	return false;
}

/* One script line: a harness command, a :command (run directly when no
 * prompt is open), a comment, or keys with <Enter> <Esc> <Tab> <Up> <Down>
 * <Left> <Right> <Home> <End> <BS> <Del> <C-x> <Space> <Lt> notation. */
static void
script_step(struct wb *wb)
{
	char line[8192];

	if (!fgets(line, sizeof line, wb->run.script)) {
		fclose(wb->run.script);
		wb->run.script = NULL;
		if (wb->run.headless)
			wb->run.quit = true;
		return;
	}
	wb->run.script_line++;
	line[strcspn(line, "\n")] = 0;
	if (line[0] == '#' || line[0] == 0)
		return;
	if (harness_command(wb, line))
		return;
	if (line[0] == ':' && !wb->ui.prompting) {
		actions_command(wb, line + 1);
		return;
	}
	for (size_t i = 0; line[i];) {
		size_t used = 0;
		int k = keymap_parse_key(line + i, &used);
		if (used == 0)
			break;
		keyq_push(k);
		i += used;
	}
}

static bool term_gone;

/* stdin still a terminal that can deliver input (not EOF, hung up or closed)? */
static bool
term_alive(void)
{
	struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};

	if (!isatty(STDIN_FILENO))
		return false;
	if (poll(&p, 1, 0) < 0)
		return errno == EINTR;
	return !(p.revents & (POLLHUP | POLLERR | POLLNVAL));
}

static void
run_loop(struct wb *wb)
{
	int fast_errs = 0;

	while (!wb->run.quit) {
		int key;

		model_scan_poll(&wb->m);
		model_details_poll(&wb->m);
		if (wb_got_signal)
			break;
		if (!wb->run.headless)
			term_mouse(wb);
		draw_now(wb);
		if (keyq_len > 0) {
			actions_key(wb, keyq_pop());
			continue;
		}
		if (wb->run.script) {
			if (model_is_idle(&wb->m)) {
				script_step(wb);
			} else {
				struct timespec ts = {0, 5 * 1000 * 1000};
				nanosleep(&ts, NULL);
			}
			continue;
		}
		if (wb->run.headless) {
			if (model_is_idle(&wb->m))
				break; /* no script and nothing to do */
			struct timespec ts = {0, 5 * 1000 * 1000};
			nanosleep(&ts, NULL);
			continue;
		}
		/* per-event details arrive a few ms after an edit: looked for
		 * often while they are computed */
		int wait_ms = model_details_busy(&wb->m) ? 10 : wb->m.worker_running ? 100 : 1000;
		struct timespec t0, t1;
		timeout(wait_ms);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		errno = 0;
		key = getch();
		if (key == ERR) {
			long ms;
			clock_gettime(CLOCK_MONOTONIC, &t1);
			ms = (long)(t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
			/* A timeout takes wait_ms; an ERR much sooner is EOF (stdin not a
			 * terminal, or the terminal gone) or an error.  Never spin on it:
			 * a few in a row end the session like SIGHUP. */
			if (errno == EIO || errno == EPIPE || errno == EBADF || ms < wait_ms / 2)
				fast_errs++;
			else
				fast_errs = 0;
			if (fast_errs >= 5 || (fast_errs > 0 && !term_alive())) {
				term_gone = true;
				wb_got_signal = SIGHUP; /* the terminal is gone */
				break;
			}
			continue;
		}
		fast_errs = 0;
		if (key == KEY_MOUSE)
			term_mouse_event(wb);
		else
			actions_key(wb, key);
	}
}

/* Remove the demo's files and its dir, unless output was written there (or
 * anything else is in it: rmdir fails); then say where it is kept. */
static void
demo_cleanup(struct wb *wb, char **demo_paths)
{
	if (!wb->m.demo_dir)
		return;
	if (!wb->m.demo_output && !getenv("TM_KEEP_DEMO")) {
		for (size_t i = 0; demo_paths && demo_paths[i]; i++)
			unlink(demo_paths[i]);
		if (rmdir(wb->m.demo_dir) == 0)
			return;
	}
	char *e = tm_escape_str(wb->m.demo_dir);
	fprintf(wb_got_signal ? stderr : stdout, "tracemerge: the demo's files are kept in %s%s\n", e,
		wb->m.demo_output ? " (you wrote output there)" : "");
	free(e);
}

/* ---- main ---- */

static void
usage(FILE *f)
{
	fprintf(f, "usage: tracemerge [--script FILE] [--theme NAME|FILE] [-c CONFIG] [--no-cache] [FILE...|ARCHIVE]\n"
		   "       tracemerge demo\n");
}

/* The user's config file: $XDG_CONFIG_HOME/tracemerge/config, else
 * ~/.config/tracemerge/config ("" when neither is known). */
static void
config_path(char *path, size_t cap)
{
	const char *x = getenv("XDG_CONFIG_HOME");
	const char *home = getenv("HOME");

	if (x && *x)
		snprintf(path, cap, "%s/tracemerge/config", x);
	else if (home)
		snprintf(path, cap, "%s/.config/tracemerge/config", home);
	else
		path[0] = 0;
}

static void
cache_settings_of(const char *path, bool *no_cache, uint64_t *max)
{
	FILE *f = path && *path ? fopen(path, "r") : NULL;
	char line[1024];

	while (f && fgets(line, sizeof line, f)) {
		char key[64], val[64];
		const char *err;
		if (sscanf(line, " set %63s = %63s", key, val) == 2)
			(void)model_cache_setting(key, val, no_cache, max, &err);
	}
	if (f)
		fclose(f);
}

void
workbench_cache_settings(bool *no_cache, uint64_t *max_bytes)
{
	char path[PATH_MAX];

	config_path(path, sizeof path);
	cache_settings_of(path, no_cache, max_bytes);
	cache_settings_of(getenv("TM_CONFIG"), no_cache, max_bytes);
}

static void
load_config(struct wb *wb, const char *cli_config)
{
	char path[PATH_MAX];

	config_path(path, sizeof path);
	if (path[0])
		actions_config_file(wb, path, true);
	if (getenv("TM_CONFIG") && *getenv("TM_CONFIG"))
		actions_config_file(wb, getenv("TM_CONFIG"), false);
	if (cli_config)
		actions_config_file(wb, cli_config, false);
}

static void
wb_fini(struct wb *wb)
{
	model_fini(&wb->m);
	frame_fini(&wb->fr);
	free(wb->ui.pending_write);
	free(wb->ui.filter);
	free(wb->ui.shown);
	free(wb->ui.search);
	free(wb->ui.browse.shown);
	free(wb->ui.browse.folded);
	free(wb->ui.browse.pfold);
	free(wb->ui.browse.rows);
	/* a pair picker still open at exit */
	tm_align_events_fini(&wb->ui.picker.ev);
	free(wb->ui.picker.file);
	free(wb->ui.picker.ref);
	free(wb->ui.picker.a_name);
	free(wb->ui.picker.b_name);
	free(wb->ui.picker.shown);
	free(wb->run.recovery_key);
	for (size_t i = 0; i < wb->run.n_rec_start; i++)
		free(wb->run.rec_start[i]);
	free(wb->run.rec_start);
	for (size_t i = 0; i < wb->run.n_rec_offers; i++)
		free(wb->run.rec_offers[i]);
	free(wb->run.rec_offers);
	free(wb->run.recovery_restored);
	free(wb->run.recovery_saved);
	free(wb->run.recovery_err);
	if (wb->run.script)
		fclose(wb->run.script);
}

int
workbench_main(int argc, char **argv)
{
	struct wb wb;
	char **inputs = calloc((size_t)argc + 1, sizeof *inputs);
	size_t n_inputs = 0;
	const char *script = getenv("TM_SCRIPT");
	const char *cli_config = NULL;
	bool demo = false, no_cache = false;
	char **demo_paths = NULL;
	int status;

	memset(&wb, 0, sizeof wb);
	model_init(&wb.m);
	wb.m.open_poll = open_poll;
	wb.m.open_poll_ud = &wb;
	wb.run.redraw = draw_now;
	wb.run.headless = getenv("TM_HEADLESS") && strcmp(getenv("TM_HEADLESS"), "0") != 0;
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--demo") == 0) {
			demo = true;
		} else if (strcmp(argv[i], "--script") == 0 && i + 1 < argc) {
			script = argv[++i];
		} else if (strcmp(argv[i], "--theme") == 0 && i + 1 < argc) {
			wb.run.theme_name = argv[++i];
		} else if ((strcmp(argv[i], "-c") == 0 || strcmp(argv[i], "--config") == 0) &&
			   i + 1 < argc) {
			cli_config = argv[++i];
		} else if (strcmp(argv[i], "--no-cache") == 0) {
			no_cache = true;
		} else if (strcmp(argv[i], "--headless") == 0) {
			wb.run.headless = true;
		} else if (strcmp(argv[i], "--keys-mdoc") == 0) {
			/* The man page's KEY BINDINGS list, generated from the table. */
			actions_print_mdoc(stdout);
			free(inputs);
			return 0;
		} else if (strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			free(inputs);
			return 0;
		} else if (strcmp(argv[i], "--") == 0) {
			while (++i < argc)
				inputs[n_inputs++] = argv[i];
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "tracemerge: unknown option %s\n", argv[i]);
			usage(stderr);
			free(inputs);
			return 64;
		} else {
			inputs[n_inputs++] = argv[i];
		}
	}
	if (script) {
		wb.run.script = fopen(script, "r");
		if (!wb.run.script) {
			fprintf(stderr, "tracemerge: %s: %s\n", script, strerror(errno));
			free(inputs);
			return 2;
		}
	}
	/* The user's locale for characters (UTF-8 line drawing) but never for
	 * numbers: the engine reads text timestamps with strtod as
	 * trace_processor does (in the C locale), and every number on screen
	 * must read as --json prints it. */
	setlocale(LC_ALL, "");
	setlocale(LC_NUMERIC, "C");
	wb.ui.ascii = strcmp(nl_langinfo(CODESET), "UTF-8") != 0;
	if (demo) {
		struct tm_error err;
		char tmpl[] = "/tmp/tracemerge-demo-XXXXXX";
		const char *tmpdir = getenv("TMPDIR");
		char dir[PATH_MAX];

		snprintf(dir, sizeof dir, "%s/tracemerge-demo-XXXXXX",
			 tmpdir && *tmpdir ? tmpdir : "/tmp");
		if (!mkdtemp(dir)) {
			snprintf(dir, sizeof dir, "%s", tmpl);
			if (!mkdtemp(dir)) {
				fprintf(stderr, "tracemerge: cannot create a temp dir: %s\n",
					strerror(errno));
				free(inputs);
				return 2;
			}
		}
		wb.m.demo_dir = strdup(dir);
		tm_error_clear(&err);
		if (tm_demo_write(dir, &demo_paths, &err) != TM_OK) {
			fprintf(stderr, "tracemerge: demo: %s\n", err.msg);
			rmdir(dir);
			free(wb.m.demo_dir);
			free(inputs);
			return 2;
		}
		n_inputs = 0;
		for (size_t i = 0; demo_paths && demo_paths[i]; i++) {
			inputs = realloc(inputs, (n_inputs + 2) * sizeof *inputs);
			inputs[n_inputs++] = demo_paths[i];
		}
	}
	install_signals();
	term_setup(&wb);
	if (wb.run.theme_name && !actions_load_theme(&wb, wb.run.theme_name))
		model_set_msg(&wb.m, ROLE_ERROR, "tracemerge warning: theme '%s' not found",
			      wb.run.theme_name);
	load_config(&wb, cli_config);
	wb.m.no_cache |= no_cache;
	actions_init(&wb);
	if (n_inputs > 0) {
		model_open(&wb.m, inputs, n_inputs);
		actions_opened(&wb);
		actions_offer_recovery(&wb);
	} else {
		actions_command(&wb, "open");
	}
	run_loop(&wb);

	/* A session removes only the recovery file it restored: once its
	 * edits are saved, written into this session's own recovery file, or
	 * given up by quitting.  Other sessions' files stay. */
	if (wb_got_signal && model_is_dirty(&wb.m))
		out_save_recovery(&wb); /* removes the restored one when saved */
	else if (wb.run.recovery_restored)
		out_recovery_remove(wb.run.recovery_restored);
	prompt_fini();
	endwin();
	if (wb.run.null_in)
		fclose(wb.run.null_in);
	if (wb.run.null_out)
		fclose(wb.run.null_out);
	out_exit_message(&wb);
	if (term_gone)
		fprintf(stderr, "tracemerge: the terminal is gone (input at end of file or "
				"closed): exiting\n");
	demo_cleanup(&wb, demo_paths);
	status = wb_got_signal ? 128 + (int)wb_got_signal : wb.run.exit_status;
	wb_fini(&wb);
	for (size_t i = 0; demo_paths && demo_paths[i]; i++)
		free(demo_paths[i]);
	free(demo_paths);
	free(inputs);
	return status;
}
