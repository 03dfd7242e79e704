/* SPDX-License-Identifier: MIT */
/*
 * tracemerge: subcommand dispatch, usage, and the output helpers every line
 * the batch commands print goes through.  Everything else opens the
 * workbench (workbench.h).  The commands, one file each (cli.h): cli_ls.c,
 * cli_check.c, cli_merge.c (manifest, merge), cli_align.c; their options
 * cli_opts.c.  The batch commands are the engine's report printed; they
 * compute nothing themselves.  Exit status: 0 clean, 1 events would be
 * dropped, 2 the archive would fail to open or an input is unreadable, 64
 * usage.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracemerge.h"
#include "workbench.h"
#include "cli.h"

static const char usage_text[] =
	"usage: tracemerge [FILE...|ARCHIVE]           open the workbench\n"
	"       tracemerge demo                         open the built-in demo\n"
	"       tracemerge ls [--json] INPUT...\n"
	"       tracemerge check [--json|--format text|json|md] [--events] [--manifest FILE] [--strict]\n"
	"                        [--no-cache] [CONFIG] INPUT...\n"
	"       tracemerge manifest [--manifest FILE] [CONFIG] INPUT...\n"
	"       tracemerge merge -o OUT.tar [--force] [--manifest FILE] [--strict] [--no-validate]\n"
	"                        [--reproducible] [CONFIG] INPUT...\n"
	"       tracemerge align [--json] [--pair FILE:NAME[#N]=REF:NAME[#N][+D]] [--msg SEND=RECV]\n"
	"                        [--apply|--solve [-o MANIFEST [--force]]] [--manifest FILE] [CONFIG] INPUT...\n"
	"CONFIG: --machine PATH=NAME  --offset PATH[:CLOCK][[MACHINE]]=OFFSET[@REF[:CLOCK][[MACHINE]]]\n"
	"        --trace-time CLOCK[@FILE]\n";

/* ------------------------------------------------------------------ */
/* output helpers                                                      */
/* ------------------------------------------------------------------ */

/*
 * Every line the batch commands print goes through say()/say_part(): the
 * formatted text, literals and untrusted values alike, passes through
 * tm_escape_display (the one escaping function), so a member name, a JSON
 * key or a manifest value quoted in trace_processor's error text cannot
 * reach the terminal raw.  The texts themselves stay exact in the report;
 * only their display is escaped.  JSON output goes through tm_escape_json.
 */
static void say_v(FILE *f, bool nl, const char *fmt, va_list ap) TM_PRINTF(3, 0);

/* The reason the first write to stdout failed: stdio keeps only a flag, and
 * a write that goes past its buffer fails long before the final flush. */
static int stdout_errno;

void
out_puts(const char *s, FILE *f)
{
	if (fputs(s, f) == EOF && f == stdout && !stdout_errno)
		stdout_errno = errno;
}

static void
say_v(FILE *f, bool nl, const char *fmt, va_list ap)
{
	/* One formatting pass for a line that fits the stack buffer (a TAR's
	 * check prints three or four a member); a longer one is formatted
	 * again into the heap. */
	char stack[512], *raw = stack;
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(stack, sizeof stack, fmt, ap);
	if (n >= (int)sizeof stack) {
		raw = malloc((size_t)n + 1);
		if (!raw)
			abort();
		vsnprintf(raw, (size_t)n + 1, fmt, ap2);
	}
	va_end(ap2);
	static struct tm_buf b; /* reused: only the main thread prints */
	tm_buf_reset(&b);
	tm_escape_display(raw, n > 0 ? (size_t)n : 0, &b, NULL, 0, NULL);
	if (nl)
		tm_buf_addc(&b, '\n');
	out_puts(b.data, f);
	if (raw != stack)
		free(raw);
}

/* One line (a newline is appended). */
void
say(FILE *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say_v(f, true, fmt, ap);
	va_end(ap);
}

/* Part of a line. */
void
say_part(FILE *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say_v(f, false, fmt, ap);
	va_end(ap);
}

/* A JSON string: always valid UTF-8, control, C1 and bidi characters
 * escaped (tm_escape_json). */
void
json_str(struct tm_buf *o, const char *s)
{
	if (!s)
		tm_buf_adds(o, "null");
	else
		tm_escape_json(s, strlen(s), o);
}

int
usage(const char *msg)
{
	if (msg)
		say(stderr, "tracemerge: %s", msg);
	fputs(usage_text, stderr);
	return EXIT_USAGE;
}

void
json_key(struct tm_buf *o, bool *first, const char *k)
{
	if (!*first)
		tm_buf_addc(o, ',');
	*first = false;
	json_str(o, k);
	tm_buf_addc(o, ':');
}

void
kv_str(struct tm_buf *o, bool *first, const char *k, const char *v)
{
	json_key(o, first, k);
	json_str(o, v);
}

void
kv_bool(struct tm_buf *o, bool *first, const char *k, bool v)
{
	json_key(o, first, k);
	tm_buf_adds(o, v ? "true" : "false");
}

/* an integer, or null when !has */
void
kv_int(struct tm_buf *o, bool *first, const char *k, bool has, int64_t v)
{
	json_key(o, first, k);
	if (has)
		tm_buf_addf(o, "%" PRId64, v);
	else
		tm_buf_adds(o, "null");
}

void
kv_u64(struct tm_buf *o, bool *first, const char *k, bool has, uint64_t v)
{
	json_key(o, first, k);
	if (has)
		tm_buf_addf(o, "%" PRIu64, v);
	else
		tm_buf_adds(o, "null");
}

/* A report that could not be written is a failure, never exit 0 with a
 * truncated report: stdio's error flag is sticky, so checking it after the
 * final flush and close covers every write before them. */
static int
finish_stdout(int rc)
{
	errno = 0;
	bool bad = fflush(stdout) != 0;
	int e = errno;
	bad |= ferror(stdout) != 0;
	errno = 0;
	if (fclose(stdout) != 0 && !bad) {
		bad = true;
		e = errno;
	}
	if (!bad)
		return rc;
	if (stdout_errno)
		e = stdout_errno;
	say(stderr, "tracemerge: cannot write to standard output: %s",
	    e ? strerror(e) : "write error");
	return rc > EXIT_DROPS ? rc : EXIT_BROKEN;
}

/* Last words on out of memory (the engine aborts after this): what ran out,
 * with write(2) only, since malloc is what failed. */
static void
say_oom(size_t bytes)
{
	char msg[128], num[32];
	size_t n = 0, k = 0;
	const char *a = "tracemerge: out of memory (could not allocate ";
	const char *b = bytes == SIZE_MAX ? "a block whose size overflows" : NULL;

	for (; a[k]; k++)
		msg[n++] = a[k];
	if (b) {
		for (k = 0; b[k]; k++)
			msg[n++] = b[k];
	} else {
		size_t v = bytes, d = 0;
		do
			num[d++] = (char)('0' + v % 10);
		while ((v /= 10) && d < sizeof num);
		while (d)
			msg[n++] = num[--d];
		for (k = 0; " bytes"[k]; k++)
			msg[n++] = " bytes"[k];
	}
	msg[n++] = ')';
	msg[n++] = '\n';
	ssize_t w = write(2, msg, n);
	(void)w;
}

int
main(int argc, char **argv)
{
	tm_set_oom_hook(say_oom);
	/* A file size limit (ulimit -f) makes write() fail with EFBIG: the
	 * writer removes its temp file and says so, instead of a silent
	 * death by SIGXFSZ that leaves the temp file behind. */
	signal(SIGXFSZ, SIG_IGN);
	if (argc >= 2) {
		const char *c = argv[1];
		if (!strcmp(c, "ls"))
			return finish_stdout(cmd_ls(argc - 2, argv + 2));
		if (!strcmp(c, "check"))
			return finish_stdout(cmd_check(argc - 2, argv + 2));
		if (!strcmp(c, "manifest"))
			return finish_stdout(cmd_manifest(argc - 2, argv + 2));
		if (!strcmp(c, "merge"))
			return finish_stdout(cmd_merge(argc - 2, argv + 2));
		if (!strcmp(c, "align"))
			return finish_stdout(cmd_align(argc - 2, argv + 2));
		if (!strcmp(c, "demo")) {
			/* "--demo" plus any workbench options that follow */
			argv[1] = (char *)(uintptr_t) "--demo";
			return workbench_main(argc - 1, argv + 1);
		}
		if (!strcmp(c, "--version") || !strcmp(c, "version")) {
			say(stdout, "tracemerge %s", TM_VERSION);
			return 0;
		}
		if (!strcmp(c, "--help") || !strcmp(c, "-h") || !strcmp(c, "help")) {
			fputs(usage_text, stdout);
			return 0;
		}
	}
	/* Not a terminal (a pipe, CI, ssh without -t) and only paths given:
	 * the check report and its status instead of curses drawn into a pipe. */
	if (argc >= 2 && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) &&
	    !(getenv("TM_HEADLESS") && strcmp(getenv("TM_HEADLESS"), "0") != 0) &&
	    !getenv("TM_SCRIPT")) {
		bool paths_only = true;
		for (int i = 1; i < argc; i++)
			paths_only &= argv[i][0] != '-' || !strcmp(argv[i], "--no-cache");
		if (paths_only) {
			fprintf(stderr, "tracemerge: not a terminal: the check report follows "
					"(the workbench needs a terminal)\n");
			return cmd_check(argc - 1, argv + 1);
		}
	}
	return workbench_main(argc - 1, argv + 1);
}
