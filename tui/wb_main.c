/* SPDX-License-Identifier: MIT */
/*
 * Workbench entry point and event loop: argument handling, opening inputs
 * (files, an archive, the demo, or a path prompt), the background scan
 * thread, terminal setup (a real tty or TM_HEADLESS newterm on /dev/null),
 * the scripted test mode (TM_SCRIPT / --script: keys and :commands consumed
 * only at the idle point), signals and the recovery manifest.
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

void
wb_set_msg(struct wb *wb, enum wb_role role, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(wb->msg, sizeof wb->msg, fmt, ap);
	va_end(ap);
	wb->msg_role = role;
}

/* ---- rows: the members shown in the list ---- */

size_t
wb_n_rows(const struct wb *wb)
{
	size_t n = wb->s ? tm_session_n_members(wb->s) : 0;

	/* Row 0 of the session is the top-level input: for an archive or a
	 * set of loose files it is the container, not a row of the list. */
	return n > 1 ? n - 1 : n;
}

size_t
wb_row_member(const struct wb *wb, size_t row)
{
	return tm_session_n_members(wb->s) > 1 ? row + 1 : row;
}

const struct tm_report_file *
wb_row_file(const struct wb *wb, size_t row)
{
	size_t m;

	if (!wb->rep || !wb->s)
		return NULL;
	m = wb_row_member(wb, row);
	for (size_t i = 0; i < wb->rep->n_files; i++)
		if (wb->rep->files[i].member == m)
			return &wb->rep->files[i];
	return NULL;
}

const char *
wb_member_name(const struct wb *wb, size_t member)
{
	const struct tm_member *mb = tm_session_member(wb->s, member);

	if (!mb)
		return "";
	if (mb->name)
		return mb->name;
	return mb->source_path ? tm_path_base(mb->source_path) : "";
}

bool
wb_owns_timeline(const struct wb *wb, const char *path)
{
	const struct tm_report *r = wb->rep;

	if (!r || !path || r->error || r->tt_file < 0 || (size_t)r->tt_file >= r->n_files)
		return false;
	return strcmp(wb_member_name(wb, r->files[r->tt_file].member), path) == 0;
}

bool
wb_ref_follows(const struct wb *wb, const char *ref)
{
	for (size_t i = 0; ref && i < wb->man.n_files; i++)
		if (wb->man.files[i].path && strcmp(wb->man.files[i].path, ref) == 0)
			return !wb->man.files[i].has_clocks;
	return true;
}

void
wb_offset_effect(const struct wb *wb, const char *path, int64_t off, const char *ref, char *buf,
		 size_t len)
{
	int64_t neg;

	if (off == 0) {
		snprintf(buf, len, "no shift");
		return;
	}
	/* trace_processor keeps the owner's timestamps: an offset on it moves
	 * the reference (and what follows it) the other way instead. */
	if (ref && wb_owns_timeline(wb, path) && wb_ref_follows(wb, ref) &&
	    !__builtin_sub_overflow(0, off, &neg)) {
		struct tm_buf d;
		tm_buf_init(&d);
		tm_format_duration_ns(neg, &d);
		snprintf(buf, len, "%s owns the timeline and stays put; %s moves %s instead", path,
			 ref, d.data ? d.data : "");
		tm_buf_fini(&d);
		return;
	}
	if (ref && wb_owns_timeline(wb, path)) {
		snprintf(buf, len, "%s owns the timeline and stays put; %s is placed by its own "
				   "clocks entry",
			 path, ref);
		return;
	}
	snprintf(buf, len, "%s", off > 0 ? "moves later" : "moves earlier");
}

/* ---- evaluation ---- */

void
wb_evaluate(struct wb *wb)
{
	struct tm_error err;
	struct tm_report *rep = NULL;

	if (!wb->s || !wb->scanned)
		return;
	tm_error_clear(&err);
	free(wb->eval_error);
	wb->eval_error = NULL;
	if (tm_session_evaluate(wb->s, &wb->man, &rep, &err) != TM_OK) {
		wb->eval_error = strdup(err.msg[0] ? err.msg : tm_status_str(err.code));
		if (rep)
			tm_report_free(rep);
		rep = NULL;
	}
	if (wb->rep)
		tm_report_free(wb->rep);
	wb->rep = rep;
}

/* ---- background scan ---- */

static void *
scan_worker(void *arg)
{
	struct wb *wb = arg;
	size_t n = tm_session_n_members(wb->s);

	for (size_t i = 0; i < n && !wb->cancel; i++) {
		struct tm_error err;
		tm_error_clear(&err);
		enum tm_status st = tm_session_scan(wb->s, i, &wb->cancel, &err);
		(void)st; /* a member's error stays in its tm_member.error */
	}
	__atomic_store_n(&wb->scan_finished, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void
scan_start(struct wb *wb)
{
	wb->cancel = false;
	wb->scan_finished = 0;
	wb->scan_cancelled = false;
	if (pthread_create(&wb->worker, NULL, scan_worker, wb) == 0) {
		wb->worker_running = true;
	} else {
		scan_worker(wb);
		wb->scanned = true;
	}
}

static void
scan_poll(struct wb *wb)
{
	if (!wb->worker_running || !__atomic_load_n(&wb->scan_finished, __ATOMIC_ACQUIRE))
		return;
	pthread_join(wb->worker, NULL);
	wb->worker_running = false;
	if (wb->cancel) {
		wb->scan_cancelled = true;
		wb_set_msg(wb, ROLE_WARNING, "Scan cancelled: numbers are not shown.");
		return;
	}
	wb->scanned = true;
	wb_evaluate(wb);
}

static bool
is_idle(const struct wb *wb)
{
	return !wb->worker_running;
}

/* ---- opening inputs ---- */

static char *
read_head(const char *path, size_t max, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;

	if (!f)
		return NULL;
	buf = malloc(max + 1);
	if (!buf) {
		fclose(f);
		return NULL;
	}
	*len = fread(buf, 1, max, f);
	buf[*len] = 0;
	fclose(f);
	return buf;
}

/* A loose manifest among several inputs goes into the editor, not the TAR. */
static bool
take_loose_manifest(struct wb *wb, const char *path)
{
	size_t len = 0;
	char *buf = read_head(path, 1 << 20, &len);
	struct tm_manifest m;
	struct tm_error err;
	bool ok = false;

	if (!buf)
		return false;
	if (tm_sniff(buf, len) == TM_FMT_MANIFEST) {
		tm_error_clear(&err);
		if (tm_manifest_parse(buf, len, &m, &err) == TM_OK) {
			tm_manifest_fini(&wb->man);
			wb->man = m;
		} else {
			tm_manifest_fini(&m);
			wb_set_msg(wb, ROLE_ERROR, "%s: %s", path, err.msg);
		}
		ok = true;
	}
	free(buf);
	return ok;
}

static void
open_inputs(struct wb *wb, char **paths, size_t n)
{
	struct tm_session_opts opts = {0};
	uint64_t total = 0;
	struct tm_error err;
	const struct tm_manifest *m;
	const struct tm_error *merr = NULL;

	wb->paths = calloc(n + 1, sizeof *wb->paths);
	wb->n_paths = 0;
	for (size_t i = 0; i < n; i++) {
		if (n > 1 && take_loose_manifest(wb, paths[i]))
			continue;
		wb->paths[wb->n_paths++] = strdup(paths[i]);
	}
	/* Per-event details (for the dropped part of the timeline) only while
	 * they stay small. */
	for (size_t i = 0; i < wb->n_paths; i++) {
		struct stat st;
		if (stat(wb->paths[i], &st) == 0)
			total += (uint64_t)st.st_size;
	}
	opts.keep_events = total < 16u * 1024 * 1024;
	tm_error_clear(&err);
	if (wb->n_paths == 0) {
		wb->open_error = strdup("no trace files to open");
		return;
	}
	if (tm_session_open(&wb->s, (const char *const *)wb->paths, wb->n_paths, &opts, &err) !=
	    TM_OK) {
		wb->s = NULL;
		wb->open_error = strdup(err.msg[0] ? err.msg : tm_status_str(err.code));
		return;
	}
	m = tm_session_manifest(wb->s, &merr);
	if (m) {
		tm_manifest_fini(&wb->man);
		tm_manifest_copy(&wb->man, m);
	} else if (merr && merr->msg[0]) {
		wb_set_msg(wb, ROLE_ERROR, "The archive's manifest: %s", merr->msg);
	}
	tm_manifest_fini(&wb->saved);
	tm_manifest_copy(&wb->saved, &wb->man);
	scan_start(wb);
}

/* Called from the path prompt of a bare `tracemerge`. */
void wb_open_line(struct wb *wb, const char *line);
void
wb_open_line(struct wb *wb, const char *line)
{
	char *copy = strdup(line), *save = NULL;
	char *words[256];
	size_t n = 0;

	for (char *w = strtok_r(copy, " \t", &save); w && n < 256; w = strtok_r(NULL, " \t", &save))
		words[n++] = w;
	if (n == 0) {
		wb->quit = true;
	} else {
		free(wb->open_error);
		wb->open_error = NULL;
		open_inputs(wb, words, n);
		if (wb->open_error)
			wb_set_msg(wb, ROLE_ERROR, "%s", wb->open_error);
	}
	free(copy);
}

/* ---- terminal ---- */

static void
term_setup(struct wb *wb)
{
	SCREEN *scr;

	if (wb->headless) {
		wb->null_out = fopen("/dev/null", "w");
		wb->null_in = fopen("/dev/null", "r");
		scr = newterm(getenv("TERM") && *getenv("TERM") ? getenv("TERM") : "xterm-256color",
			      wb->null_out, wb->null_in);
		if (!scr)
			scr = newterm("xterm", wb->null_out, wb->null_in);
		if (!scr) {
			fprintf(stderr, "tracemerge: cannot initialise a headless terminal\n");
			exit(2);
		}
		set_term(scr);
		wb->tty_out = NULL;
	} else {
		initscr();
		wb->tty_out = stdout;
	}
	raw();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	set_escdelay(getenv("ESCDELAY") ? atoi(getenv("ESCDELAY")) : 25);
	curs_set(0);
	theme_init(wb);
}

void
wb_draw_now(struct wb *wb)
{
	view_draw(wb);
	if (!wb->headless)
		doupdate();
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
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
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

/* One script line: a :command (run directly when no prompt is open), a
 * comment, or keys with <Enter> <Esc> <Tab> <Up> <Down> <Left> <Right>
 * <Home> <End> <BS> <Del> <C-x> <Space> <Lt> notation. */
static void
script_step(struct wb *wb)
{
	char line[8192];

	if (!fgets(line, sizeof line, wb->script)) {
		fclose(wb->script);
		wb->script = NULL;
		if (wb->headless)
			wb->quit = true;
		return;
	}
	wb->script_line++;
	line[strcspn(line, "\n")] = 0;
	if (line[0] == '#' || line[0] == 0)
		return;
	/* Test-harness commands work even while a prompt is open. */
	if (strncmp(line, ":dump-screen", 12) == 0 || strncmp(line, ":resize ", 8) == 0 ||
	    (line[0] == ':' && wb->prompt == PROMPT_NONE)) {
		edit_command(wb, line + 1);
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

static void
handle_key(struct wb *wb, int key)
{
	if (key == KEY_RESIZE) {
		if (wb->prompt != PROMPT_NONE)
			prompt_feed(wb, KEY_RESIZE);
		return;
	}
	if (wb->prompt != PROMPT_NONE) {
		prompt_feed(wb, key);
		return;
	}
	if (wb->help) {
		if (key == 'q' || key == 27 || key == '?' || key == 'h' || key == '\r' ||
		    key == '\n') {
			wb->help = false;
		} else if (key == 'j' || key == KEY_DOWN) {
			wb->help_scroll++;
		} else if ((key == 'k' || key == KEY_UP) && wb->help_scroll > 0) {
			wb->help_scroll--;
		}
		return;
	}
	edit_request(wb, keymap_lookup(key));
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

	while (!wb->quit) {
		int key;

		scan_poll(wb);
		if (wb_got_signal)
			break;
		wb_draw_now(wb);
		if (keyq_len > 0) {
			handle_key(wb, keyq_pop());
			continue;
		}
		if (wb->script) {
			if (is_idle(wb)) {
				script_step(wb);
			} else {
				struct timespec ts = {0, 5 * 1000 * 1000};
				nanosleep(&ts, NULL);
			}
			continue;
		}
		if (wb->headless) {
			if (is_idle(wb))
				break; /* no script and nothing to do */
			struct timespec ts = {0, 5 * 1000 * 1000};
			nanosleep(&ts, NULL);
			continue;
		}
		int wait_ms = wb->worker_running ? 100 : 1000;
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
		handle_key(wb, key);
	}
}

/* ---- recovery ---- */

static void
offer_recovery(struct wb *wb)
{
	struct stat st;

	wb->recovery_path = out_recovery_path(wb);
	if (!wb->recovery_path || stat(wb->recovery_path, &st) != 0)
		return;
	wb->confirm = CONFIRM_RESTORE;
	prompt_open(wb, PROMPT_CONFIRM, "Unsaved edits from a previous session were recovered. Restore them? (y/n) ", "");
}

/* ---- the demo's temp dir ---- */

void
wb_note_output(struct wb *wb, const char *path)
{
	char dir[PATH_MAX], real_dir[PATH_MAX], real_demo[PATH_MAX];
	char *slash;
	size_t n;

	if (!wb->demo_dir || !path)
		return;
	snprintf(dir, sizeof dir, "%s", path);
	slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = 0;
	else if (slash)
		*slash = 0;
	else
		snprintf(dir, sizeof dir, ".");
	if (!realpath(dir, real_dir) || !realpath(wb->demo_dir, real_demo))
		return;
	n = strlen(real_demo);
	if (strncmp(real_dir, real_demo, n) == 0 && (real_dir[n] == 0 || real_dir[n] == '/'))
		wb->demo_output = true;
}

/* Remove the demo's files and its dir, unless output was written there (or
 * anything else is in it: rmdir fails); then say where it is kept. */
static void
demo_cleanup(struct wb *wb, char **demo_paths)
{
	if (!wb->demo_dir)
		return;
	if (!wb->demo_output && !getenv("TM_KEEP_DEMO")) {
		for (size_t i = 0; demo_paths && demo_paths[i]; i++)
			unlink(demo_paths[i]);
		if (rmdir(wb->demo_dir) == 0)
			return;
	}
	char *e = tm_escape_str(wb->demo_dir);
	fprintf(wb_got_signal ? stderr : stdout, "tracemerge: the demo's files are kept in %s%s\n", e,
		wb->demo_output ? " (you wrote output there)" : "");
	free(e);
}

/* ---- main ---- */

static void
usage(FILE *f)
{
	fprintf(f, "usage: tracemerge [--script FILE] [--theme NAME|FILE] [-c CONFIG] [FILE...|ARCHIVE]\n"
		   "       tracemerge demo\n");
}

static void
load_config(struct wb *wb, const char *cli_config)
{
	const char *x = getenv("XDG_CONFIG_HOME");
	const char *home = getenv("HOME");
	char path[PATH_MAX];

	if (x && *x)
		snprintf(path, sizeof path, "%s/tracemerge/config", x);
	else if (home)
		snprintf(path, sizeof path, "%s/.config/tracemerge/config", home);
	else
		path[0] = 0;
	if (path[0])
		theme_load_file(wb, path, true);
	if (getenv("TM_CONFIG") && *getenv("TM_CONFIG"))
		theme_load_file(wb, getenv("TM_CONFIG"), false);
	if (cli_config)
		theme_load_file(wb, cli_config, false);
}

static void
wb_fini(struct wb *wb)
{
	if (wb->worker_running) {
		wb->cancel = true;
		pthread_join(wb->worker, NULL);
		wb->worker_running = false;
	}
	if (wb->rep)
		tm_report_free(wb->rep);
	if (wb->s)
		tm_session_close(wb->s);
	for (size_t i = 0; i < wb->n_paths; i++)
		free(wb->paths[i]);
	free(wb->paths);
	for (size_t i = 0; i < wb->n_extra_machines; i++)
		free(wb->extra_machines[i]);
	free(wb->extra_machines);
	tm_manifest_fini(&wb->man);
	tm_manifest_fini(&wb->saved);
	edit_stack_fini(&wb->undo);
	edit_stack_fini(&wb->redo);
	free(wb->eval_error);
	free(wb->open_error);
	free(wb->prompt_text);
	free(wb->pending_write);
	free(wb->written);
	free(wb->recovery_path);
	free(wb->demo_dir);
	free(wb->baseline);
	free(wb->config_path);
	if (wb->script)
		fclose(wb->script);
}

int
workbench_main(int argc, char **argv)
{
	struct wb wb;
	char **inputs = calloc((size_t)argc + 1, sizeof *inputs);
	size_t n_inputs = 0;
	const char *script = getenv("TM_SCRIPT");
	const char *cli_config = NULL;
	bool demo = false;
	char **demo_paths = NULL;
	int status;

	memset(&wb, 0, sizeof wb);
	tm_manifest_init(&wb.man);
	tm_manifest_init(&wb.saved);
	wb.next_machine_n = 1;
	wb.headless = getenv("TM_HEADLESS") && strcmp(getenv("TM_HEADLESS"), "0") != 0;
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--demo") == 0) {
			demo = true;
		} else if (strcmp(argv[i], "--script") == 0 && i + 1 < argc) {
			script = argv[++i];
		} else if (strcmp(argv[i], "--theme") == 0 && i + 1 < argc) {
			wb.theme_name = argv[++i];
		} else if ((strcmp(argv[i], "-c") == 0 || strcmp(argv[i], "--config") == 0) &&
			   i + 1 < argc) {
			cli_config = argv[++i];
		} else if (strcmp(argv[i], "--headless") == 0) {
			wb.headless = true;
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
		wb.script = fopen(script, "r");
		if (!wb.script) {
			fprintf(stderr, "tracemerge: %s: %s\n", script, strerror(errno));
			free(inputs);
			return 2;
		}
	}
	setlocale(LC_ALL, "");
	wb.ascii = strcmp(nl_langinfo(CODESET), "UTF-8") != 0;
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
		wb.demo_dir = strdup(dir);
		tm_error_clear(&err);
		if (tm_demo_write(dir, &demo_paths, &err) != TM_OK) {
			fprintf(stderr, "tracemerge: demo: %s\n", err.msg);
			rmdir(dir);
			free(wb.demo_dir);
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
	load_config(&wb, cli_config);
	prompt_init(&wb);
	if (n_inputs > 0) {
		open_inputs(&wb, inputs, n_inputs);
		if (wb.open_error)
			wb_set_msg(&wb, ROLE_ERROR, "%s", wb.open_error);
		offer_recovery(&wb);
	} else {
		prompt_open(&wb, PROMPT_OPEN, "Open (files or archive): ", "");
	}
	run_loop(&wb);

	if (wb_got_signal && edit_is_dirty(&wb))
		out_save_recovery(&wb);
	else if (!wb_got_signal && wb.recovery_path && !edit_is_dirty(&wb) &&
		 wb.confirm != CONFIRM_RESTORE)
		unlink(wb.recovery_path);
	prompt_fini();
	endwin();
	if (wb.null_in)
		fclose(wb.null_in);
	if (wb.null_out)
		fclose(wb.null_out);
	out_exit_message(&wb);
	if (term_gone)
		fprintf(stderr, "tracemerge: the terminal is gone (input at end of file or "
				"closed): exiting\n");
	demo_cleanup(&wb, demo_paths);
	status = wb_got_signal ? 128 + (int)wb_got_signal : wb.exit_status;
	wb_fini(&wb);
	for (size_t i = 0; demo_paths && demo_paths[i]; i++)
		free(demo_paths[i]);
	free(demo_paths);
	free(inputs);
	return status;
}
