/* SPDX-License-Identifier: MIT */
/*
 * Private to the batch commands: main.c (dispatch, usage, the output
 * helpers every line printed goes through), cli_opts.c (options, CONFIG,
 * opening the inputs) and one file per command (cli_ls.c, cli_check.c,
 * cli_merge.c: manifest and merge, cli_align.c).
 */
#ifndef TM_CLI_H
#define TM_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "tracemerge.h"

#define EXIT_DROPS 1
#define EXIT_BROKEN 2
#define EXIT_USAGE 64

struct opts {
	bool json, events, strict, no_validate, reproducible;
	bool markdown; /* check --format md */
	bool force; /* -o may replace an existing regular file (never an input) */
	const char *manifest_path;
	const char *out;
	bool no_cache; /* --no-cache: scan the inputs, neither load nor save a saved scan */
	const char **inputs;
	size_t n_inputs;
	/* config edits, applied in order */
	struct cfg {
		char kind; /* 'm' machine, 'o' offset, 't' trace-time */
		const char *arg;
	} *cfg;
	size_t n_cfg;
};

/* main.c: output helpers (escaped through tm_escape_display / tm_escape_json) */
void out_puts(const char *s, FILE *f);
void say(FILE *f, const char *fmt, ...) TM_PRINTF(2, 3);
void say_part(FILE *f, const char *fmt, ...) TM_PRINTF(2, 3);
void json_str(struct tm_buf *o, const char *s);
int usage(const char *msg);
void json_key(struct tm_buf *o, bool *first, const char *k);
void kv_str(struct tm_buf *o, bool *first, const char *k, const char *v);
void kv_bool(struct tm_buf *o, bool *first, const char *k, bool v);
void kv_int(struct tm_buf *o, bool *first, const char *k, bool has, int64_t v);
void kv_u64(struct tm_buf *o, bool *first, const char *k, bool has, uint64_t v);

/* cli_opts.c */
int parse_opts(int argc, char **argv, struct opts *o, bool allow_out);
void free_opts(struct opts *o);
void print_manifest_error(const struct tm_error *e);
int out_refused(const struct opts *o, const char *path, bool force);
void say_stale(const char *path, unsigned n);
int write_out(const struct opts *o, const char *path, bool force, const struct tm_buf *b);
void say_cache_note(const struct tm_session *s);
int open_all(const struct opts *o, struct tm_session **s, struct tm_manifest *m, bool *have_m,
	     bool keep_events, struct tm_error *merr);

/* cli_check.c: the report printed (check's text, its --json, the proven
 * fixes), to out (the workbench's :report too) */
void check_print_text(FILE *out, const struct tm_session *s, const struct tm_report *r);
void check_print_json(FILE *out, struct tm_session *s, const struct tm_manifest *cur,
		      const struct tm_report *r, bool events);
void check_print_fixes(FILE *out, struct tm_session *s, const struct tm_manifest *cur);

/* one file per command */
int cmd_ls(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_manifest(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_align(int argc, char **argv);

#endif
