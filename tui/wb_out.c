/* SPDX-License-Identifier: MIT */
/*
 * Output: copy the manifest with OSC 52 (wrapped for tmux and GNU screen),
 * the file fallback, writing the merged TAR through tm_merge_write with a
 * progress line, the recovery files (one per session, written on SIGHUP,
 * SIGTERM, SIGINT, SIGQUIT or a lost terminal, offered at the next start), and the
 * commands printed on exit that open the result.
 */
#include <curses.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "wb.h"

#define OSC52_MAX (100 * 1024) /* xterm and most terminals cap OSC 52 near here */

char *
out_base64(const void *data, size_t len)
{
	static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *p = data;
	char *out = malloc(4 * ((len + 2) / 3) + 1), *o = out;

	if (!out)
		abort();
	for (size_t i = 0; i < len; i += 3) {
		unsigned v = (unsigned)p[i] << 16;
		if (i + 1 < len)
			v |= (unsigned)p[i + 1] << 8;
		if (i + 2 < len)
			v |= p[i + 2];
		*o++ = tbl[(v >> 18) & 63];
		*o++ = tbl[(v >> 12) & 63];
		*o++ = i + 1 < len ? tbl[(v >> 6) & 63] : '=';
		*o++ = i + 2 < len ? tbl[v & 63] : '=';
	}
	*o = 0;
	return out;
}

static void
emit(const struct wb *wb, struct tm_buf *b)
{
	model_manifest_json(&wb->m, b);
}

/* A global tmux option's value (tmux show-options -gv, on the server in
 * $TMUX), or NULL when it cannot be read.  Caller frees. */
static char *
tmux_option(const char *name)
{
	char cmd[128], line[128];
	FILE *p;
	char *v = NULL;

	snprintf(cmd, sizeof cmd, "tmux show-options -gv %s 2>/dev/null", name);
	p = popen(cmd, "r");
	if (!p)
		return NULL;
	if (fgets(line, sizeof line, p)) {
		line[strcspn(line, " \r\n")] = 0;
		if (line[0])
			v = strdup(line);
	}
	pclose(p);
	return v;
}

/* The manifest into tmux's paste buffer by its own command (the server in
 * $TMUX): -w also hands it to the outer terminal's clipboard where tmux
 * may (3.2 and later; without -w on older ones).  True when tmux took it. */
static bool
tmux_load_buffer(const struct tm_buf *json)
{
	static const char *const cmds[] = {"tmux load-buffer -w - >/dev/null 2>&1",
					   "tmux load-buffer - >/dev/null 2>&1"};
	void (*old)(int) = signal(SIGPIPE, SIG_IGN);
	bool ok = false;

	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0] && !ok; i++) {
		FILE *p = popen(cmds[i], "w");
		if (!p)
			break;
		bool wrote = fwrite(json->data ? json->data : "", 1, json->len, p) == json->len;
		int st = pclose(p);
		ok = wrote && st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
	}
	signal(SIGPIPE, old);
	return ok;
}

enum out_copy
out_copy_manifest(struct wb *wb, char *why, size_t why_len)
{
	struct tm_buf json, seq;
	char *b64, *clip = NULL, *pass = NULL;
	const char *tmux = getenv("TMUX"), *sty = getenv("STY"), *term = getenv("TERM");
	enum out_copy res = COPY_SENT;

	tm_buf_init(&json);
	tm_buf_init(&seq);
	emit(wb, &json);
	if (json.len > OSC52_MAX) {
		model_set_msg(&wb->m, ROLE_WARNING,
			      "The manifest (%zu bytes) is too large for OSC 52: save it with e",
			      json.len);
		tm_buf_fini(&json);
		return COPY_FAILED;
	}
	b64 = out_base64(json.data, json.len);
	if (tmux && *tmux) {
		/* tmux stores a plain OSC 52 in its paste buffer (set-clipboard on)
		 * and forwards it; the DCS-wrapped copy reaches the outer terminal
		 * when allow-passthrough is on and set-clipboard is not. */
		tm_buf_addf(&seq, "\033]52;c;%s\a", b64);
		tm_buf_addf(&seq, "\033Ptmux;\033\033]52;c;%s\a\033\\", b64);
		clip = tmux_option("set-clipboard");
		pass = tmux_option("allow-passthrough");
	} else if ((sty && *sty) || (term && strncmp(term, "screen", 6) == 0)) {
		/* GNU screen: DCS passthrough in chunks below its 768-byte limit. */
		size_t n = strlen(b64);
		tm_buf_adds(&seq, "\033P\033]52;c;");
		for (size_t i = 0; i < n; i += 512) {
			if (i)
				tm_buf_adds(&seq, "\033\\\033P");
			tm_buf_add(&seq, b64 + i, n - i < 512 ? n - i : 512);
		}
		tm_buf_adds(&seq, "\a\033\\");
	} else {
		tm_buf_addf(&seq, "\033]52;c;%s\a", b64);
	}
	if (wb->run.tty_out) {
		fwrite(seq.data, 1, seq.len, wb->run.tty_out);
		fflush(wb->run.tty_out);
	}
	/* Say what the path to the clipboard allows, never more.  At most 80
	 * columns: the message line is one row (the log keeps it whole). */
	bool pass_on = pass && (strcmp(pass, "on") == 0 || strcmp(pass, "all") == 0);
	if (why_len)
		why[0] = 0;
	if (tmux && *tmux && clip && strcmp(clip, "on") == 0) {
		res = COPY_ARRIVED;
		model_set_msg(&wb->m, ROLE_OK, "Copied %zu bytes into tmux's paste buffer (set-clipboard on)",
			      json.len);
	} else if (tmux && *tmux && !pass_on && tmux_load_buffer(&json)) {
		/* tmux ignores a program's OSC 52 here (set-clipboard off or
		 * external, tmux's default): its own command takes it */
		res = COPY_ARRIVED;
		model_set_msg(&wb->m, ROLE_OK,
			      "Copied %zu bytes into tmux's paste buffer (tmux load-buffer; prefix ] "
			      "pastes)",
			      json.len);
	} else if (tmux && *tmux && clip && !pass_on) {
		res = COPY_FAILED;
		snprintf(why, why_len,
			 "tmux's set-clipboard is %s and tmux load-buffer failed; fix: tmux set -g "
			 "set-clipboard on",
			 clip);
		model_set_msg(&wb->m, ROLE_ERROR, "Not copied: %s", why);
	} else if (tmux && *tmux && clip) {
		model_set_msg(&wb->m, ROLE_WARNING,
			      "Sent %zu bytes through tmux passthrough (set-clipboard %s): arrives if "
			      "the terminal allows OSC 52",
			      json.len, clip);
	} else if (tmux && *tmux) {
		model_set_msg(&wb->m, ROLE_WARNING,
			      "Sent %zu bytes via tmux; arrives only with tmux set -g set-clipboard on",
			      json.len);
	} else if ((sty && *sty) || (term && strncmp(term, "screen", 6) == 0)) {
		model_set_msg(&wb->m, ROLE_WARNING,
			      "Sent %zu bytes through GNU screen: arrives if the terminal allows OSC 52",
			      json.len);
	} else {
		model_set_msg(&wb->m, ROLE_INFO,
			      "OSC 52 sent (%zu bytes): arrives if the terminal allows. Else: e, "
			      ":print-on-exit",
			      json.len);
	}
	wb->m.copied = res == COPY_ARRIVED;
	free(clip);
	free(pass);
	free(b64);
	tm_buf_fini(&seq);
	tm_buf_fini(&json);
	return res;
}

/* One rule for every file the workbench writes (tm_output): the session's
 * inputs and special files refused, anything else replaced only after the
 * question (replace), atomic, the user's permissions kept. */
static struct tm_output
out_rule(const struct wb *wb, bool replace)
{
	return (struct tm_output){.inputs = (const char *const *)wb->m.paths,
				  .n_inputs = wb->m.n_paths,
				  .replace = replace};
}

enum tm_status
out_may_write(struct wb *wb, const char *path)
{
	struct tm_output o = out_rule(wb, false);
	struct tm_error e;

	tm_error_clear(&e);
	enum tm_status st = tm_output_check(path, &o, &e);
	if (st != TM_OK && st != TM_ERR_EXISTS)
		model_set_msg(&wb->m, ROLE_ERROR, "Not written: %s", e.msg);
	return st;
}

/* "; removed N stale temp files" when the write cleaned up what an
 * interrupted write to that path left (tm_output). */
static void
stale_note(char *buf, size_t len, unsigned n)
{
	if (n)
		snprintf(buf, len, "; removed %u stale temp file%s", n, n == 1 ? "" : "s");
	else
		buf[0] = 0;
}

bool
out_write_report(struct wb *wb, const char *path, bool replace)
{
	const struct tm_report *r = wb->m.rep;
	if (!r || !wb->m.s) {
		model_set_msg(&wb->m, ROLE_ERROR, "Not written: no report yet (%s)",
			      wb->m.eval_error ? wb->m.eval_error : "the files are being scanned");
		return false;
	}
	size_t n = strlen(path);
	const char *kind = n > 5 && !strcmp(path + n - 5, ".json") ? "JSON"
			   : n > 3 && !strcmp(path + n - 3, ".md")  ? "markdown"
								    : "text";
	const struct tm_manifest *cur = wb->m.man_broken ? tm_session_manifest(wb->m.s, NULL) : &wb->m.man;
	struct tm_buf b;
	tm_buf_init(&b);
	if (kind[0] == 'm') {
		tm_report_markdown(wb->m.s, r, &b);
	} else {
		char *mem = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&mem, &len);
		if (!f)
			abort();
		if (kind[0] == 'J') {
			check_print_json(f, wb->m.s, cur, r, false);
		} else {
			check_print_text(f, wb->m.s, r);
			if (!r->ok)
				check_print_fixes(f, wb->m.s, cur);
		}
		fclose(f);
		tm_buf_add(&b, mem ? mem : "", len);
		free(mem);
	}
	struct tm_output o = out_rule(wb, replace);
	struct tm_error e;
	char note[96];
	tm_error_clear(&e);
	bool ok = tm_write_atomic(path, b.data ? b.data : "", b.len, &o, &e) == TM_OK;
	stale_note(note, sizeof note, o.n_stale);
	if (ok) {
		model_note_output(&wb->m, path);
		model_set_msg(&wb->m, ROLE_OK, "Wrote the report as %s (%zu bytes) to %s%s", kind, b.len,
			      path, note);
	} else {
		model_set_msg(&wb->m, ROLE_ERROR, "Not written: %s%s", e.msg, note);
	}
	tm_buf_fini(&b);
	return ok;
}

bool
out_save_manifest(struct wb *wb, const char *path, bool replace)
{
	struct tm_buf json;
	struct tm_output o = out_rule(wb, replace);
	struct tm_error e;
	char note[96];

	tm_buf_init(&json);
	emit(wb, &json);
	tm_error_clear(&e);
	bool ok = tm_write_atomic(path, json.data, json.len, &o, &e) == TM_OK;
	stale_note(note, sizeof note, o.n_stale);
	if (ok) {
		model_mark_saved(&wb->m);
		model_note_output(&wb->m, path);
		model_set_msg(&wb->m, ROLE_OK, "Wrote the manifest (%zu bytes) to %s%s", json.len,
			      path, note);
	} else {
		model_set_msg(&wb->m, ROLE_ERROR, "Not written: %s%s", e.msg, note);
	}
	tm_buf_fini(&json);
	return ok;
}

static void
on_progress(void *ud, uint64_t done, uint64_t total)
{
	struct wb *wb = ud;

	model_set_msg(&wb->m, ROLE_INFO, "Writing... %d%%",
		   total ? (int)((double)done * 100.0 / (double)total) : 100);
	if (!wb->run.headless && wb->run.redraw)
		wb->run.redraw(wb);
}

void
out_write_tar(struct wb *wb, const char *path, bool replace)
{
	struct tm_write_opts opts;
	struct tm_error err;
	unsigned n_stale = 0;
	char note[96];

	memset(&opts, 0, sizeof opts);
	opts.replace = replace; /* the question was asked */
	opts.n_stale = &n_stale;
	opts.progress = on_progress;
	opts.progress_ud = wb;
	opts.reproducible = wb->run.headless; /* byte-stable output in tests */
	tm_error_clear(&err);
	if (!wb->m.s) {
		model_set_msg(&wb->m, ROLE_ERROR, "Nothing to write");
		return;
	}
	size_t n_bad = model_n_problems(&wb->m);
	if (n_bad) {
		model_set_msg(&wb->m, ROLE_ERROR,
			      "Not written: %zu file%s cannot be TAR members as they are (! on the "
			      "row says why)",
			      n_bad, n_bad == 1 ? "" : "s");
		return;
	}
	if (wb->m.man_broken && wb->m.man_text_edited) {
		model_set_msg(&wb->m, ROLE_ERROR,
			      "Not written: the edited manifest does not parse (%s edits it)",
			      model_key(&wb->m, REQ_EDIT_MANIFEST));
		return;
	}
	/* A broken manifest is written as it is (the archive's own member). */
	enum tm_status st =
		tm_merge_write(wb->m.s, wb->m.man_broken ? NULL : &wb->m.man, path, &opts, &err);
	stale_note(note, sizeof note, n_stale);
	if (st != TM_OK) {
		model_set_msg(&wb->m, ROLE_ERROR, "Write failed: %s%s", err.msg, note);
		return;
	}
	free(wb->m.written);
	wb->m.written = strdup(path);
	model_note_output(&wb->m, path);
	model_mark_saved(&wb->m);
	/* as batch merge warns: what opening the TAR will do, said first */
	const struct tm_report *r = wb->m.rep;
	char warn[600] = "";
	if (r && r->error)
		snprintf(warn, sizeof warn, "Warning: %s will fail to open (%s). ", path, r->error);
	else if (r && r->dropped)
		snprintf(warn, sizeof warn,
			 "Warning: %" PRIu64 " event%s will be dropped when %s is opened (the "
			 "verdict says why). ",
			 r->dropped, r->dropped == 1 ? "" : "s", path);
	model_set_msg(&wb->m, warn[0] ? ROLE_WARNING : ROLE_OK, "%sWrote %s%s%s", warn,
		      warn[0] ? "it" : path,
		      wb->m.man_broken ? " with the archive's manifest as it is (it does not parse)"
		      : tm_manifest_is_trivial(&wb->m.man) ? " (no manifest needed)"
							   : " with its manifest",
		      note);
}

/* ---- recovery ---- */

/* One recovery file per session: recovery-<inputs>-<pid>-<start>.json in
 * the state directory (tracemerge-recovery-... in the current directory
 * when that cannot take it), <inputs> a hash of the inputs the session
 * started with, so that the next start on them finds every one.  Beside
 * it, <name>.inputs when the set of inputs changed (files added, renamed,
 * moved): each input's file and its member name, NUL-terminated.  A
 * session removes only the file it wrote and the one it restored. */

static char *
recovery_dir(void)
{
	const char *x = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	char dir[PATH_MAX];

	if (x && *x)
		snprintf(dir, sizeof dir, "%s/tracemerge", x);
	else if (home && *home)
		snprintf(dir, sizeof dir, "%s/.local/state/tracemerge", home);
	else
		return NULL;
	return strdup(dir);
}

void
out_recovery_init(struct wb *wb)
{
	uint64_t h = TM_HASH_INIT; /* over the absolute input paths, each with its NUL */

	if (wb->run.recovery_key)
		return;
	for (size_t i = 0; i < wb->m.n_paths; i++) {
		char abs[PATH_MAX];
		const char *p = realpath(wb->m.paths[i], abs) ? abs : wb->m.paths[i];
		h = tm_hash_bytes(h, p, strlen(p) + 1);
	}
	char key[32];
	snprintf(key, sizeof key, "%016llx", (unsigned long long)h);
	wb->run.recovery_key = strdup(key);
	wb->run.rec_start = calloc(wb->m.n_paths + 1, sizeof *wb->run.rec_start);
	if (!wb->run.recovery_key || !wb->run.rec_start)
		abort();
	for (size_t i = 0; i < wb->m.n_paths; i++)
		if (!(wb->run.rec_start[i] = strdup(wb->m.paths[i])))
			abort();
	wb->run.n_rec_start = wb->m.n_paths;
	wb->run.rec_t0 = (long long)time(NULL);
}

void
out_recovery_remove(const char *path)
{
	char side[PATH_MAX + 16];

	model_recovery_inputs_path(path, side, sizeof side);
	unlink(side);
	unlink(path);
}

struct rec_found {
	char *path;
	long long mtime;
};

static int
newest_first(const void *a, const void *b)
{
	const struct rec_found *x = a, *y = b;
	if (x->mtime != y->mtime)
		return x->mtime < y->mtime ? 1 : -1;
	return strcmp(x->path, y->path);
}

/* Files in dir whose names are prefix + ".json" (an older version's one
 * file per inputs) or prefix + "-...json". */
static void
find_in(const char *dir, const char *prefix, struct rec_found **v, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t pl = strlen(prefix);

	while (d && (e = readdir(d))) {
		size_t nl = strlen(e->d_name);
		if (strncmp(e->d_name, prefix, pl) != 0 || nl < pl + 5 ||
		    strcmp(e->d_name + nl - 5, ".json") != 0 ||
		    (e->d_name[pl] != '-' && e->d_name[pl] != '.'))
			continue;
		char path[PATH_MAX + 256];
		struct stat st;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid())
			continue;
		*v = realloc(*v, (*n + 1) * sizeof **v);
		if (!*v)
			abort();
		(*v)[*n].path = strdup(strcmp(dir, ".") ? path : e->d_name);
		(*v)[(*n)++].mtime = (long long)st.st_mtime;
	}
	if (d)
		closedir(d);
}

void
out_recovery_list(struct wb *wb)
{
	struct rec_found *v = NULL;
	size_t n = 0;
	char prefix[64], *dir = recovery_dir();

	out_recovery_init(wb);
	snprintf(prefix, sizeof prefix, "recovery-%s", wb->run.recovery_key);
	if (dir)
		find_in(dir, prefix, &v, &n);
	snprintf(prefix, sizeof prefix, "tracemerge-recovery-%s", wb->run.recovery_key);
	find_in(".", prefix, &v, &n);
	free(dir);
	if (n)
		qsort(v, n, sizeof *v, newest_first);
	wb->run.rec_offers = calloc(n + 1, sizeof *wb->run.rec_offers);
	if (!wb->run.rec_offers)
		abort();
	for (size_t i = 0; i < n; i++)
		wb->run.rec_offers[i] = v[i].path;
	wb->run.n_rec_offers = n;
	wb->run.rec_offer = 0;
	free(v);
}

/* The inputs beside a recovery file, when the set changed: each file's
 * real path and its member name. */
static bool
write_sidecar(struct wb *wb, const char *path, char *err, size_t err_len)
{
	char side[PATH_MAX + 16];
	bool same = wb->m.n_paths == wb->run.n_rec_start;

	for (size_t i = 0; same && i < wb->m.n_paths; i++)
		same = !strcmp(wb->m.paths[i], wb->run.rec_start[i]);
	model_recovery_inputs_path(path, side, sizeof side);
	if (same)
		return true;
	struct tm_buf b;
	tm_buf_init(&b);
	for (size_t i = 0; i < wb->m.n_paths; i++) {
		char abs[PATH_MAX];
		const char *p = realpath(wb->m.paths[i], abs) ? abs : wb->m.paths[i];
		tm_buf_add(&b, p, strlen(p) + 1);
		const char *name = tm_path_base(wb->m.paths[i]);
		tm_buf_add(&b, name, strlen(name) + 1);
	}
	struct tm_output o = out_rule(wb, true);
	struct tm_error e;
	o.private_file = true;
	tm_error_clear(&e);
	bool ok = tm_write_atomic(side, b.data ? b.data : "", b.len, &o, &e) == TM_OK;
	if (!ok) {
		char *m = tm_escape_str(e.msg);
		snprintf(err, err_len, "%s", m);
		free(m);
	}
	tm_buf_fini(&b);
	return ok;
}

/* A recovery file: private (0600), never an input; its inputs first. */
static bool
write_recovery(struct wb *wb, const char *path, const struct tm_buf *json, char *err,
	       size_t err_len)
{
	struct tm_output o = out_rule(wb, true);
	struct tm_error e;

	if (!write_sidecar(wb, path, err, err_len))
		return false;
	o.private_file = true;
	tm_error_clear(&e);
	if (tm_write_atomic(path, json->data, json->len, &o, &e) == TM_OK)
		return true;
	out_recovery_remove(path);
	char *m = tm_escape_str(e.msg);
	snprintf(err, err_len, "%s", m);
	free(m);
	return false;
}

static void
mkdir_p(const char *path)
{
	char tmp[PATH_MAX];

	snprintf(tmp, sizeof tmp, "%s", path);
	for (char *p = tmp + 1; *p; p++) {
		if (*p == '/') {
			*p = 0;
			mkdir(tmp, 0700);
			*p = '/';
		}
	}
	mkdir(tmp, 0700);
}

/* Save the edits where the next start finds them; if that directory cannot
 * take them (read-only, a file in its place, full, no HOME), the current
 * directory; the exit message says which, or prints the manifest itself.
 * Saved, the file this session restored is superseded and removed. */
bool
out_save_recovery(struct wb *wb)
{
	struct tm_buf json;
	char err[PATH_MAX + 128] = "", name[128], path[PATH_MAX + 160];
	char *dir;
	bool ok = false;

	free(wb->run.recovery_saved);
	wb->run.recovery_saved = NULL;
	free(wb->run.recovery_err);
	wb->run.recovery_err = NULL;
	out_recovery_init(wb);
	snprintf(name, sizeof name, "recovery-%s-%ld-%lld.json", wb->run.recovery_key,
		 (long)getpid(), wb->run.rec_t0);
	tm_buf_init(&json);
	emit(wb, &json);
	dir = recovery_dir();
	if (dir) {
		mkdir_p(dir);
		snprintf(path, sizeof path, "%s/%s", dir, name);
		ok = write_recovery(wb, path, &json, err, sizeof err);
		if (ok)
			wb->run.recovery_saved = strdup(path);
	} else {
		snprintf(err, sizeof err, "neither XDG_STATE_HOME nor HOME is set");
	}
	free(dir);
	if (!ok) {
		char here[PATH_MAX], e2[PATH_MAX + 128];
		snprintf(here, sizeof here, "tracemerge-%s", name);
		if (write_recovery(wb, here, &json, e2, sizeof e2)) {
			wb->run.recovery_saved = strdup(here);
			ok = true;
		}
	}
	if (!ok)
		wb->run.recovery_err = strdup(err);
	else if (wb->run.recovery_restored)
		out_recovery_remove(wb->run.recovery_restored);
	tm_buf_fini(&json);
	return ok;
}

void
out_exit_message(struct wb *wb)
{
	if (wb_got_signal) {
		if (!model_is_dirty(&wb->m))
			return;
		if (wb->run.recovery_saved) {
			char *e = tm_escape_str(wb->run.recovery_saved);
			fprintf(stderr, "tracemerge: edits saved to %s\n", e);
			free(e);
			return;
		}
		/* nowhere to save them: the manifest itself, so nothing is lost */
		struct tm_buf json;
		tm_buf_init(&json);
		emit(wb, &json);
		fprintf(stderr,
			"tracemerge: could not save the edits (%s); the manifest as edited:\n",
			wb->run.recovery_err ? wb->run.recovery_err : "no recovery directory");
		struct tm_buf safe;
		tm_buf_init(&safe);
		tm_escape_json_doc(json.data, json.len, &safe);
		fwrite(safe.data, 1, safe.len, stderr);
		fputc('\n', stderr);
		tm_buf_fini(&safe);
		tm_buf_fini(&json);
		return;
	}
	if (wb->m.print_manifest_on_exit) {
		struct tm_buf json;
		tm_buf_init(&json);
		emit(wb, &json);
		fwrite(json.data, 1, json.len, stdout);
		tm_buf_fini(&json);
	}
	if (wb->m.written) {
		char *e = tm_escape_str(wb->m.written);
		char host[256] = "this-host";
		gethostname(host, sizeof host - 1);
		char *eh = tm_escape_str(host);
		printf("Wrote %s. Open it with:\n"
		       "  trace_processor %s\n"
		       "  trace_processor --httpd %s   # then open https://ui.perfetto.dev\n"
		       "  # from your laptop, forward the port first: ssh -L 9001:localhost:9001 %s\n",
		       e, e, e, eh);
		free(e);
		free(eh);
	}
}

/* ---- $EDITOR ---- */

bool
out_run_editor(struct wb *wb, const char *path)
{
	const char *ed = getenv("VISUAL");
	pid_t pid;
	int status = 0;

	if (!ed || !*ed)
		ed = getenv("EDITOR");
	if (!ed || !*ed)
		ed = "vi";
	if (!wb->run.headless) {
		def_prog_mode();
		endwin();
	}
	pid = fork();
	if (pid == 0) {
		/* The editor's command line is the user's (it may hold options). */
		execl("/bin/sh", "sh", "-c", "$0 \"$1\"", ed, path, (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	if (!wb->run.headless) {
		reset_prog_mode();
		clearok(curscr, TRUE);
	}
	if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		model_set_msg(&wb->m, ROLE_ERROR, "%s failed (status %d): the manifest is unchanged",
			      ed, pid < 0 ? -1 : WIFEXITED(status) ? WEXITSTATUS(status) : 128);
		return false;
	}
	return true;
}
