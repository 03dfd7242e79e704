/* SPDX-License-Identifier: MIT */
/* Unit tests for the manifest model (engine/manifest.c): every error text of
 * trace_processor's manifest reader that a parse can reach, JSON number and
 * syntax edge cases, outdated-syntax hints, canonical emission and round
 * trips, the apply plan, clock names and durations, and every manifest of
 * the conformance corpus (tests/conformance/cases, embedded below). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "internal.h"
#include "manifest_internal.h"
#include "t.h"

#define M(body) "{\"perfetto_manifest\": {\"version\": 1" body "}}"
#define F(entries) M(", \"files\": [" entries "]")
#define P "perfetto_manifest: "

struct err_case {
	const char *json;
	const char *msg;
};

/* Input -> exact message (perfetto_manifest_reader.cc's texts). */
static const struct err_case err_cases[] = {
	/* 1, 2 */
	{M(", \"trace_time\": {\"clock\": 6}"), P "clock name must be a string"},
	{M(", \"trace_time\": {\"clock\": \"BOOTIME\"}"),
	 P "unknown clock name: BOOTIME. Use one of REALTIME, REALTIME_COARSE, MONOTONIC, "
	   "MONOTONIC_COARSE, MONOTONIC_RAW, BOOTTIME."},
	{F("{\"path\": \"a\", \"clocks\": {\"clock\": \"boottime\", \"sync_to\": {\"file\": \"b\"}}}"),
	 P "unknown clock name: boottime. Use one of REALTIME, REALTIME_COARSE, MONOTONIC, "
	   "MONOTONIC_COARSE, MONOTONIC_RAW, BOOTTIME."},
	{F("{\"path\": \"a\", \"clocks\": {\"sync_to\": {\"file\": \"b\", \"clock\": null}}}"),
	 P "clock name must be a string"},
	/* 3 */
	{F("{\"path\": \"a\", \"clocks\": {\"machine\": 1, \"sync_to\": {\"file\": \"b\"}}}"),
	 P "clocks: machine must be a string"},
	/* 4 */
	{F("{\"path\": \"a\", \"clocks\": {}}"),
	 P "clocks: a sync_to block is required. Manual clock handling relates this file to a "
	   "clock in another trace, e.g. \"sync_to\": {\"file\": \"other.pb\"}."},
	/* 5 */
	{F("{\"path\": \"a\", \"clocks\": {\"sync_to\": \"b\"}}"), P "clocks: sync_to must be an object"},
	/* 6 */
	{F("{\"path\": \"a\", \"clocks\": {\"sync_to\": {}}}"),
	 P "clocks: sync_to.file is required and must be a string"},
	{F("{\"path\": \"a\", \"clocks\": {\"sync_to\": {\"machine\": \"m\"}}}"),
	 P "clocks: sync_to.file is required and must be a string"},
	/* 7 */
	{F("{\"path\": \"a\", \"clocks\": {\"sync_to\": {\"file\": \"b\", \"machine\": 3}}}"),
	 P "clocks: sync_to.machine must be a string"},
	/* 8 */
	{F("{\"path\": \"a\", \"clocks\": {\"sync_to\": {\"file\": \"b\"}, \"offset_ns\": 1e3}}"),
	 P "clocks: offset_ns must be an integer"},
	{F("{\"path\": \"a\", \"clocks\": {\"sync_to\": {\"file\": \"b\"}, \"offset_ns\": 500000.0}}"),
	 P "clocks: offset_ns must be an integer"},
	{F("{\"path\": \"a\", \"clocks\": {\"sync_to\": {\"file\": \"b\"}, \"offset_ns\": \"5\"}}"),
	 P "clocks: offset_ns must be an integer"},
	{F("{\"path\": \"a\", \"clocks\": {\"sync_to\": {\"file\": \"b\"}, \"offset_ns\": "
	   "9223372036854775808}}"),
	 P "clocks: offset_ns must be an integer"},
	/* 9 */
	{F("{\"path\": \"a\", \"clocks\": {\"sync_to\": {\"file\": \"b\"}, \"offset_ns\": "
	   "-9223372036854775808}}"),
	 P "clocks: offset_ns is out of range"},
	/* 10 */
	{F("{\"path\": \"t\", \"__exported_table_schema\": {\"format\": 1, \"name\": \"x\"}}"),
	 P "__exported_table_schema needs an integer format, a string name, an integer row_count "
	   "and a columns array"},
	/* 11 */
	{F("{\"path\": \"t\", \"__exported_table_schema\": {\"format\": 1, \"name\": \"x\", "
	   "\"row_count\": -1, \"columns\": []}}"),
	 P "table 'x': invalid row_count"},
	{F("{\"path\": \"t\", \"__exported_table_schema\": {\"format\": 1, \"name\": \"x\", "
	   "\"row_count\": 4294967296, \"columns\": []}}"),
	 P "table 'x': invalid row_count"},
	/* 12 */
	{F("{\"path\": \"t\", \"__exported_table_schema\": {\"format\": 1, \"name\": \"x\", "
	   "\"row_count\": 2, \"columns\": [{\"name\": \"c\", \"type\": \"int\"}]}}"),
	 P "table 'x': malformed column entry"},
	/* 13 */
	{M(", \"attributes\": [1]"),
	 P "attributes must be an object of string or integer values, e.g. \"attributes\": "
	   "{\"benchmark\": \"startup\"}."},
	/* 14 */
	{M(", \"attributes\": {\"b\": 1, \"\": 2}"), P "attributes: keys must be non-empty"},
	/* 15: std::map order, so 'a' is reported before 'z' */
	{M(", \"attributes\": {\"z\": true, \"a\": 1.5}"),
	 P "attributes: 'a' must be a string or an integer"},
	{M(", \"attributes\": {\"flags\": [\"x\"]}"),
	 P "attributes: 'flags' must be a string or an integer"},
	/* 16 */
	{F("\"a.pb\""), P "files entries must be objects with a string path"},
	{F("{\"path\": 1}"), P "files entries must be objects with a string path"},
	/* 17 */
	{F("{\"path\": \"t\", \"machine\": {\"name\": \"m\"}, \"__exported_table_schema\": {}}"),
	 P "'t': an exported table is not a trace, so __exported_table_schema cannot be combined "
	   "with clocks/machine/machines"},
	/* 18 */
	{F("{\"path\": \"a\", \"clocks\": [1]}"), P "clocks must be an object"},
	/* 19 */
	{F("{\"path\": \"a\", \"machine\": {\"name\": \"m\"}, \"machines\": []}"),
	 P "machine and machines are mutually exclusive. Use `machine` for a single-machine file, "
	   "or `machines` to remap a multi-machine proto's embedded ids; not both."},
	/* 20 */
	{F("{\"path\": \"a\", \"machine\": \"phone\"}"),
	 P "machine must be an object with a string name, e.g. \"machine\": {\"name\": \"phone\"}."},
	/* 21 */
	{F("{\"path\": \"a\", \"machine\": {\"name\": \"\"}}"), P "machine: name must be non-empty"},
	/* 22 */
	{F("{\"path\": \"a\", \"machines\": {\"id\": 0}}"), P "machines must be an array"},
	/* 23 */
	{F("{\"path\": \"a\", \"machines\": [{\"id\": \"1\", \"name\": \"x\"}]}"),
	 P "machines entries need an integer id and a string name, e.g. \"machines\": [{\"id\": 0, "
	   "\"name\": \"phone\"}]."},
	{F("{\"path\": \"a\", \"machines\": [{\"id\": 1}]}"),
	 P "machines entries need an integer id and a string name, e.g. \"machines\": [{\"id\": 0, "
	   "\"name\": \"phone\"}]."},
	/* 24 */
	{F("{\"path\": \"a\", \"machines\": [{\"id\": -1, \"name\": \"x\"}]}"),
	 P "machines: id must be in [0, 4294967295]"},
	{F("{\"path\": \"a\", \"machines\": [{\"id\": 4294967296, \"name\": \"x\"}]}"),
	 P "machines: id must be in [0, 4294967295]"},
	{F("{\"path\": \"a\", \"machines\": [{\"id\": 1e300, \"name\": \"x\"}]}"),
	 P "machines: id must be in [0, 4294967295]"},
	/* 25 */
	{F("{\"path\": \"a\", \"machines\": [{\"id\": 0, \"name\": \"\"}]}"),
	 P "machines: name must be non-empty"},
	/* 27: JSON DOM errors, trace_processor's texts */
	{"", "Empty JSON input"},
	{"  \n", "Failed to start parsing: Expected '{' or '[' at the start. Input is empty or "
		 "whitespace only."},
	{"x{}", "Failed to start parsing: Expected '{' or '[' at the start. Got 'x'"},
	{"{ ", "Failed to start parsing: "},
	{"{\"perfetto_manifest\": {\"version\": 1 x}}",
	 "Failed to parse object: Expected ',' or '}' after value for key 'version'. Got 'x'"},
	{"{\"perfetto_manifest\" {}}",
	 "Failed to parse object: Expected ':' after key 'perfetto_manifest'. Got '{'"},
	{"{perfetto_manifest: 1}", "Failed to parse object: Expected '\"' at the start of key. Got 'p'"},
	{"{\"a\": [1 2]}", "Failed to parse array: Expected ',' or ']' after value. Got '2'"},
	{"{\"a\": [1] x}",
	 "Failed to parse array: Expected ',' or '}' after value for key 'a'. Got 'x'"},
	{"{\"a\": 01}", "Failed to parse object: Invalid number: leading zero in '01}'"},
	{"{\"a\": tru}", "Failed to parse object: Invalid token: expected 'true' but got 'tru}'"},
	{"{\"a\": 1e999}", "Failed to parse object: Double overflow/underflow parsing '1e999'"},
	{"{\"a\": \"\\uZZZZ\"}", "Failed to parse object: Invalid escape sequence: \\u\"\\uZ"},
	{"{\"a\": \"\\ud800\"}",
	 "Failed to parse object: Invalid escape sequence: \\ud800 (code point 55296 is reserved "
	 "for surrogate pairs)"},
	{"{\"perfetto_manifest\": {\"version\": 1", "Failed to parse object: "},
	/* sticky status: the earlier (recovered) overflow text is what is printed */
	{"{\"a\": 99999999999999999999, \"b\"", "Failed to parse object: Integer overflow parsing "
					      "'99999999999999999999'"},
	/* 28 */
	{"[1]", P "expected a JSON object with a top-level perfetto_manifest key"},
	{"{\"perfetto_manifest\": []}", P "expected a JSON object with a top-level perfetto_manifest key"},
	{"{\"manifest\": {}}", P "expected a JSON object with a top-level perfetto_manifest key"},
	/* 29-31 */
	{"{\"perfetto_manifest\": {}}", P "missing required field: version"},
	{"{\"perfetto_manifest\": {\"version\": 1.0}}", P "version must be an integer"},
	{"{\"perfetto_manifest\": {\"version\": \"1\"}}", P "version must be an integer"},
	{"{\"perfetto_manifest\": {\"version\": 99}}",
	 P "unsupported version: 99. Only version 1 is supported; set \"version\": 1."},
	{"{\"perfetto_manifest\": {\"version\": -9223372036854775808}}",
	 P "unsupported version: -9223372036854775808. Only version 1 is supported; set "
	   "\"version\": 1."},
	/* 32-35 */
	{M(", \"trace_time\": \"BOOTTIME\""), P "trace_time must be an object"},
	{M(", \"trace_time\": {\"file\": \"a\"}"), P "trace_time needs a clock"},
	{M(", \"trace_time\": {\"clock\": \"BOOTTIME\", \"file\": 1}"), P "trace_time: file must be a string"},
	{M(", \"trace_time\": {\"clock\": \"BOOTTIME\", \"machine\": null}"),
	 P "trace_time: machine must be a string"},
	/* 36 */
	{M(", \"files\": {}"), P "files must be an array"},
	/* 38 */
	{M(", \"trace_time\": {\"clock\": \"BOOTTIME\", \"machine\": \"phone\"}"),
	 P "trace_time: machine 'phone' needs trace_time: file too: a machine name alone is "
	   "ambiguous because embedded machine ids are scoped to their trace."},
	/* 39 */
	{M(", \"trace_time\": {\"clock\": \"BOOTTIME\", \"file\": \"ghost.pb\"}"),
	 P "trace_time: file names unknown file 'ghost.pb'. It must match the `path` of an entry "
	   "in the `files` array."},
	{F("{\"path\": \"a\", \"clocks\": {\"sync_to\": {\"file\": \"ghost.pb\"}}}"),
	 P "clocks: sync_to.file names unknown file 'ghost.pb'. It must match the `path` of an "
	   "entry in the `files` array."},
	/* 40 */
	{"{\"perfetto_manifest\": {\"version\": 1, \"trace_time\": {\"clock\": \"BOOTTIME\", "
	 "\"file\": \"m.pb\"}, \"files\": [{\"path\": \"m.pb\", \"machines\": [{\"id\": 0, \"name\": "
	 "\"h\"}]}]}}",
	 P "trace_time: file 'm.pb' is a multi-machine trace; also name the machine with "
	   "trace_time: machine."},
	{F("{\"path\": \"m.pb\", \"machines\": [{\"id\": 1, \"name\": \"h\"}]}, {\"path\": \"a\", "
	   "\"clocks\": {\"sync_to\": {\"file\": \"m.pb\"}}}"),
	 P "clocks: sync_to.file 'm.pb' is a multi-machine trace; also name the machine with "
	   "clocks: sync_to.machine."},
	/* 41 */
	{"{\"perfetto_manifest\": {\"version\": 1, \"trace_time\": {\"clock\": \"BOOTTIME\", "
	 "\"file\": \"a\", \"machine\": \"x\"}, \"files\": [{\"path\": \"a\", \"machine\": {\"name\": "
	 "\"y\"}}, {\"path\": \"b\", \"machine\": {\"name\": \"x\"}}]}}",
	 P "trace_time: machine 'x' is not a machine declared by file 'a'."},
	{F("{\"path\": \"m.pb\", \"machines\": [{\"id\": 1, \"name\": \"h\"}]}, {\"path\": \"a\", "
	   "\"clocks\": {\"sync_to\": {\"file\": \"m.pb\", \"machine\": \"ghost\"}}}"),
	 P "clocks: sync_to.machine 'ghost' is not a machine declared by file 'm.pb'."},
	/* 42 */
	{F("{\"path\": \"m.pb\", \"machines\": [{\"id\": 0, \"name\": \"h\"}], \"clocks\": "
	   "{\"sync_to\": {\"file\": \"a\"}}}, {\"path\": \"a\"}"),
	 P "clocks: file 'm.pb' is a multi-machine trace; name which machine the clock is on with "
	   "clocks: machine."},
	/* 43 */
	{F("{\"path\": \"a\", \"machine\": {\"name\": \"p\"}, \"clocks\": {\"machine\": \"ghost\", "
	   "\"sync_to\": {\"file\": \"b\"}}}, {\"path\": \"b\"}"),
	 P "clocks: machine 'ghost' is not a machine declared by file 'a'."},
	/* order: the clocks block is parsed before machine/machines (18 < 19) */
	{F("{\"path\": \"a\", \"machine\": {\"name\": \"m\"}, \"machines\": [], \"clocks\": 1}"),
	 P "clocks must be an object"},
	/* order: trace_time (33) before files (36) */
	{M(", \"files\": 1, \"trace_time\": {}"), P "trace_time needs a clock"},
	/* order: files (16) before attributes (13) */
	{M(", \"attributes\": 1, \"files\": [1]"), P "files entries must be objects with a string path"},
	/* order: attributes (15) before apply (39) */
	{M(", \"attributes\": {\"a\": null}, \"trace_time\": {\"clock\": \"BOOTTIME\", \"file\": \"g\"}"),
	 P "attributes: 'a' must be a string or an integer"},
	/* order: trace_time resolution (39) before the overrides (43) */
	{"{\"perfetto_manifest\": {\"version\": 1, \"trace_time\": {\"clock\": \"BOOTTIME\", "
	 "\"file\": \"g\"}, \"files\": [{\"path\": \"a\", \"clocks\": {\"machine\": \"x\", \"sync_to\": "
	 "{\"file\": \"a\"}}}]}}",
	 P "trace_time: file names unknown file 'g'. It must match the `path` of an entry in the "
	   "`files` array."},
	/* duplicate keys: the last one wins */
	{"{\"perfetto_manifest\": {\"version\": 1, \"version\": 2}}",
	 P "unsupported version: 2. Only version 1 is supported; set \"version\": 1."},
};

static void
test_errors(void)
{
	for (size_t i = 0; i < sizeof err_cases / sizeof err_cases[0]; i++) {
		struct tm_manifest m;
		struct tm_error err;
		enum tm_status s;

		s = tm_manifest_parse(err_cases[i].json, strlen(err_cases[i].json), &m, &err);
		CHECK_INT(s, TM_ERR_MANIFEST);
		CHECK_INT(err.code, TM_ERR_MANIFEST);
		CHECK_STR(err.msg, err_cases[i].msg);
		CHECK_INT(m.n_files, 0);
		tm_manifest_fini(&m);
		if (t_failed_) {
			snprintf(t_why_ + strlen(t_why_), sizeof t_why_ - strlen(t_why_),
				 " [case %zu]", i);
			return;
		}
	}
}

/* Every text of 1-25 and 28-36, 38-43 has a case above. */
static void
test_error_coverage(void)
{
	static const char *const texts[] = {
		"clock name must be a string", "unknown clock name:", "clocks: machine must be",
		"a sync_to block is required", "sync_to must be an object", "sync_to.file is required",
		"sync_to.machine must be a string", "offset_ns must be an integer",
		"offset_ns is out of range", "__exported_table_schema needs", "invalid row_count",
		"malformed column entry", "attributes must be an object", "keys must be non-empty",
		"must be a string or an integer", "files entries must be objects",
		"an exported table is not a trace", "clocks must be an object",
		"mutually exclusive", "machine must be an object", "machine: name must be non-empty",
		"machines must be an array", "machines entries need", "id must be in",
		"machines: name must be non-empty", "top-level perfetto_manifest key",
		"missing required field", "version must be an integer", "unsupported version",
		"trace_time must be an object", "trace_time needs a clock",
		"trace_time: file must be a string", "trace_time: machine must be a string",
		"files must be an array", "needs trace_time: file too", "names unknown file",
		"is a multi-machine trace; also name", "is not a machine declared by file",
		"name which machine the clock is on", "clocks: machine 'ghost' is not",
	};

	for (size_t t = 0; t < sizeof texts / sizeof texts[0]; t++) {
		bool found = false;

		for (size_t i = 0; i < sizeof err_cases / sizeof err_cases[0]; i++)
			if (strstr(err_cases[i].msg, texts[t]))
				found = true;
		CHECK(found);
		if (!found) {
			snprintf(t_why_ + strlen(t_why_), sizeof t_why_ - strlen(t_why_), " [%s]",
				 texts[t]);
			return;
		}
	}
}

static bool
parse_ok(const char *json, struct tm_manifest *m)
{
	struct tm_error err;

	if (tm_manifest_parse(json, strlen(json), m, &err) != TM_OK) {
		snprintf(t_why_, sizeof t_why_, "unexpected error: %s", err.msg);
		t_failed_ = 1;
		return false;
	}
	return true;
}

static char *
emit(const struct tm_manifest *m)
{
	struct tm_buf b;

	tm_buf_init(&b);
	tm_manifest_emit(m, &b);
	return tm_buf_steal(&b);
}

/* A character above U+FFFF that the writer escapes for display (here a
 * private-use one, U+10A28A) must not become a \uDBE8\uDE8A pair: the
 * reader, like trace_processor's, refuses surrogate escapes, so the written
 * manifest could not be read back (found by fuzz_manifest). */
static void
test_emit_astral_reads_back(void)
{
	struct tm_manifest m1, m2;

	if (!parse_ok(F("{\"path\": \"a\xf4\x8a\x8a\x8a\", \"machine\": {\"name\": "
			"\"m\xf4\x8a\x8a\x8a\"}}"),
		      &m1))
		return;
	char *e1 = emit(&m1);
	CHECK(strstr(e1, "\\ud") == NULL && strstr(e1, "\\uD") == NULL);
	CHECK(strstr(e1, "a\xf4\x8a\x8a\x8a") != NULL);
	if (parse_ok(e1, &m2)) {
		char *e2 = emit(&m2);
		CHECK_STR(e2, e1);
		CHECK(tm_manifest_equal(&m1, &m2));
		free(e2);
		tm_manifest_fini(&m2);
	}
	free(e1);
	tm_manifest_fini(&m1);
}

static void
test_numbers(void)
{
	struct tm_manifest m;

	/* INT64_MAX is accepted; leading zeros of the exponent are a double */
	if (parse_ok(F("{\"path\": \"a\", \"clocks\": {\"sync_to\": {\"file\": \"a\", \"clock\": "
		       "\"BOOTTIME\"}, \"offset_ns\": 9223372036854775807}}"),
		     &m)) {
		CHECK(m.files[0].has_clocks);
		CHECK(m.files[0].clocks.offset_ns == INT64_MAX);
		CHECK_INT(m.files[0].clocks.sync_clock, TM_CLOCK_BOOTTIME);
		CHECK_INT(m.files[0].clocks.clock, TM_CLOCK_UNSET);
		tm_manifest_fini(&m);
	}
	if (parse_ok(F("{\"path\": \"a\", \"clocks\": {\"sync_to\": {\"file\": \"a\", \"clock\": "
		       "\"BOOTTIME\"}, \"offset_ns\": -9223372036854775807}}"),
		     &m)) {
		CHECK(m.files[0].clocks.offset_ns == -INT64_MAX);
		tm_manifest_fini(&m);
	}
	/* machines ids: doubles truncate toward zero */
	if (parse_ok(F("{\"path\": \"a\", \"machines\": [{\"id\": 7.9, \"name\": \"x\"}, {\"id\": 6.9, "
		       "\"name\": \"y\"}, {\"id\": 4294967295, \"name\": \"z\"}, {\"id\": -0.5, "
		       "\"name\": \"w\"}, {\"id\": 1e3, \"name\": \"v\"}]}"),
		     &m)) {
		CHECK_INT(m.files[0].n_machines, 5);
		CHECK_INT(m.files[0].machines[0].id, 7);
		CHECK_INT(m.files[0].machines[1].id, 6);
		CHECK_INT(m.files[0].machines[2].id, 4294967295u);
		CHECK_INT(m.files[0].machines[3].id, 0);
		CHECK_INT(m.files[0].machines[4].id, 1000);
		CHECK_STR(m.files[0].machines[2].name, "z");
		tm_manifest_fini(&m);
	}
	/* trailing garbage after the root is ignored; so is a trailing comma */
	if (parse_ok("{\"perfetto_manifest\": {\"version\": 1,}} garbage {[", &m))
		tm_manifest_fini(&m);
	if (parse_ok("  {\"perfetto_manifest\": {\"version\": 1}}\n\n{\"x\"", &m))
		tm_manifest_fini(&m);
	/* StringToInt64 quirk: past INT64_MIN's digits the value wraps (to 0 here) */
	if (parse_ok(F("{\"path\": \"a\", \"clocks\": {\"sync_to\": {\"file\": \"a\", \"clock\": "
		       "\"BOOTTIME\"}, \"offset_ns\": -92233720368547758080}}"),
		     &m)) {
		CHECK(m.files[0].clocks.offset_ns == 0);
		tm_manifest_fini(&m);
	}
	/* attributes: ints and strings; doubles and big ints are not ints */
	if (parse_ok(M(", \"attributes\": {\"run\": 42, \"name\": \"startup\", \"neg\": -7}"), &m)) {
		CHECK_INT(m.n_attrs, 3);
		CHECK_STR(m.attrs[0].key, "run");
		CHECK(m.attrs[0].is_int && m.attrs[0].ival == 42);
		CHECK_STR(m.attrs[1].sval, "startup");
		CHECK(m.attrs[2].ival == -7);
		tm_manifest_fini(&m);
	}
	/* lenient escapes: unknown ones are dropped, \u to UTF-8 */
	if (parse_ok(F("{\"path\": \"a\\qb\\u00e9\\/\"}"), &m)) {
		CHECK_STR(m.files[0].path, "ab\xc3\xa9/");
		tm_manifest_fini(&m);
	}
	/* either closer ends a scope */
	if (parse_ok("{\"perfetto_manifest\": {\"version\": 1, \"files\": [}}}", &m)) {
		CHECK(m.has_files);
		CHECK_INT(m.n_files, 0);
		tm_manifest_fini(&m);
	}
}

static void
test_duplicates(void)
{
	struct tm_manifest m;
	char *out;

	if (!parse_ok("{\"perfetto_manifest\": {\"version\": 3, \"files\": [{\"path\": \"x\", "
		      "\"path\": \"a\", \"machine\": {\"name\": \"p\"}, \"machine\": {\"name\": \"q\"}}],"
		      " \"version\": 1, \"z\": 1, \"z\": 2}}",
		      &m))
		return;
	CHECK_INT(m.version, 1);
	CHECK_STR(m.files[0].path, "a");
	CHECK_STR(m.files[0].machine_name, "q");
	out = emit(&m);
	CHECK_STR(out, "{\n  \"perfetto_manifest\": {\n    \"version\": 1,\n    \"files\": [\n"
		       "      {\n        \"path\": \"a\",\n        \"machine\": {\n          \"name\": "
		       "\"q\"\n        }\n      }\n    ],\n    \"z\": 2\n  }\n}\n");
	free(out);
	tm_manifest_fini(&m);
}

static const char rich[] =
	"{\"x_root\": {\"n\": [9007199254740993, 1.50, -0, 1E+2, true, null, \"s\\n\"]},"
	" \"perfetto_manifest\": {\"attributes\": {\"b\": \"t\\\"x\", \"a\": -12},"
	" \"files\": [{\"clocks\": {\"note\": {}, \"offset_ns\": -250000000, \"machine\": \"vm\","
	" \"clock\": \"MONOTONIC\", \"sync_to\": {\"clock\": \"BOOTTIME\", \"machine\": \"host\","
	" \"zz\": 18446744073709551616, \"file\": \"relay.pftrace\"}}, \"path\": \"vm.pftrace\","
	" \"extra\": [[], {}], \"machines\": [{\"id\": 0, \"name\": \"vm\"}, {\"name\": \"vm2\","
	" \"id\": 3}]},"
	" {\"path\": \"relay.pftrace\", \"machine\": {\"name\": \"host\", \"color\": \"red\"}},"
	" {\"path\": \"t.bin\", \"__exported_table_schema\": {\"format\": 1, \"name\": \"tab\","
	" \"row_count\": 3, \"columns\": [{\"name\": \"c\", \"type\": \"int\", \"nullability\": \"n\","
	" \"sort\": \"s\", \"duplicates\": \"d\"}]}}],"
	" \"trace_time\": {\"machine\": \"host\", \"file\": \"relay.pftrace\", \"clock\": \"REALTIME\","
	" \"why\": 1},"
	" \"version\": 1, \"comment\": \"kept\"}}";

static const char rich_golden[] =
	"{\n"
	"  \"perfetto_manifest\": {\n"
	"    \"version\": 1,\n"
	"    \"trace_time\": {\n"
	"      \"clock\": \"REALTIME\",\n"
	"      \"file\": \"relay.pftrace\",\n"
	"      \"machine\": \"host\",\n"
	"      \"why\": 1\n"
	"    },\n"
	"    \"files\": [\n"
	"      {\n"
	"        \"path\": \"vm.pftrace\",\n"
	"        \"machines\": [\n"
	"          {\n"
	"            \"id\": 0,\n"
	"            \"name\": \"vm\"\n"
	"          },\n"
	"          {\n"
	"            \"id\": 3,\n"
	"            \"name\": \"vm2\"\n"
	"          }\n"
	"        ],\n"
	"        \"clocks\": {\n"
	"          \"sync_to\": {\n"
	"            \"file\": \"relay.pftrace\",\n"
	"            \"machine\": \"host\",\n"
	"            \"clock\": \"BOOTTIME\",\n"
	"            \"zz\": 18446744073709551616\n"
	"          },\n"
	"          \"offset_ns\": -250000000,\n"
	"          \"clock\": \"MONOTONIC\",\n"
	"          \"machine\": \"vm\",\n"
	"          \"note\": {}\n"
	"        },\n"
	"        \"extra\": [\n"
	"          [],\n"
	"          {}\n"
	"        ]\n"
	"      },\n"
	"      {\n"
	"        \"path\": \"relay.pftrace\",\n"
	"        \"machine\": {\n"
	"          \"name\": \"host\",\n"
	"          \"color\": \"red\"\n"
	"        }\n"
	"      },\n"
	"      {\n"
	"        \"path\": \"t.bin\",\n"
	"        \"__exported_table_schema\": {\n"
	"          \"format\": 1,\n"
	"          \"name\": \"tab\",\n"
	"          \"row_count\": 3,\n"
	"          \"columns\": [\n"
	"            {\n"
	"              \"name\": \"c\",\n"
	"              \"type\": \"int\",\n"
	"              \"nullability\": \"n\",\n"
	"              \"sort\": \"s\",\n"
	"              \"duplicates\": \"d\"\n"
	"            }\n"
	"          ]\n"
	"        }\n"
	"      }\n"
	"    ],\n"
	"    \"attributes\": {\n"
	"      \"b\": \"t\\\"x\",\n"
	"      \"a\": -12\n"
	"    },\n"
	"    \"comment\": \"kept\"\n"
	"  },\n"
	"  \"x_root\": {\n"
	"    \"n\": [\n"
	"      9007199254740993,\n"
	"      1.50,\n"
	"      -0,\n"
	"      1E+2,\n"
	"      true,\n"
	"      null,\n"
	"      \"s\\n\"\n"
	"    ]\n"
	"  }\n"
	"}\n";

static void
test_round_trip_rich(void)
{
	struct tm_manifest m, m2, m3;
	char *a, *b;

	if (!parse_ok(rich, &m))
		return;
	CHECK(tm_manifest_file_is_table(&m.files[2]));
	CHECK(!tm_manifest_file_is_table(&m.files[0]));
	CHECK(!tm_manifest_is_trivial(&m));
	a = emit(&m);
	CHECK_STR(a, rich_golden);
	if (parse_ok(a, &m2)) {
		b = emit(&m2);
		CHECK_STR(b, a);
		CHECK(tm_manifest_equal(&m, &m2));
		free(b);
		tm_manifest_copy(&m3, &m2);
		CHECK(tm_manifest_equal(&m3, &m));
		m3.files[0].clocks.offset_ns++;
		CHECK(!tm_manifest_equal(&m3, &m));
		tm_manifest_fini(&m3);
		tm_manifest_fini(&m2);
	}
	free(a);
	tm_manifest_fini(&m);
}

/* The outputs of Perfetto's merge dialog are emitted with its key order. */
static void
test_dialog_shapes(void)
{
	struct tm_manifest m;
	char *out;

	tm_manifest_init(&m);
	CHECK(tm_manifest_is_trivial(&m));
	out = emit(&m);
	CHECK_STR(out, "{\n  \"perfetto_manifest\": {\n    \"version\": 1\n  }\n}\n");
	free(out);
	tm_manifest_file_get(&m, "render.json", true);
	CHECK(tm_manifest_is_trivial(&m));
	tm_manifest_set_clocks(&m, "gpu.json", TM_CLOCK_UNSET, "render.json", TM_CLOCK_UNSET, NULL,
			       500000);
	CHECK(!tm_manifest_is_trivial(&m));
	out = emit(&m);
	CHECK_STR(out, "{\n  \"perfetto_manifest\": {\n    \"version\": 1,\n    \"files\": [\n"
		       "      {\n        \"path\": \"render.json\"\n      },\n"
		       "      {\n        \"path\": \"gpu.json\",\n        \"clocks\": {\n"
		       "          \"sync_to\": {\n            \"file\": \"render.json\"\n          },\n"
		       "          \"offset_ns\": 500000\n        }\n      }\n    ]\n  }\n}\n");
	free(out);
	tm_manifest_file_get(&m, "a.pftrace", true);
	tm_manifest_set_clocks(&m, "b.pftrace", TM_CLOCK_BOOTTIME, "a.pftrace", TM_CLOCK_BOOTTIME,
			       NULL, 0);
	tm_manifest_set_machine(&m, "b.pftrace", "Machine 1");
	tm_manifest_set_trace_time(&m, TM_CLOCK_REALTIME, NULL, NULL);
	tm_manifest_set_attr_int(&m, "run_id", 42);
	tm_manifest_set_attr_str(&m, "bench", "startup");
	tm_manifest_set_attr_int(&m, "run_id", 43);
	out = emit(&m);
	CHECK(strstr(out, "{\n        \"path\": \"b.pftrace\",\n        \"machine\": {\n"
			  "          \"name\": \"Machine 1\"\n        },\n        \"clocks\": {\n"
			  "          \"sync_to\": {\n            \"file\": \"a.pftrace\",\n"
			  "            \"clock\": \"BOOTTIME\"\n          },\n"
			  "          \"offset_ns\": 0,\n          \"clock\": \"BOOTTIME\"\n        }\n"
			  "      }") != NULL);
	CHECK(strstr(out, "\"version\": 1,\n    \"trace_time\": {\n      \"clock\": \"REALTIME\"\n"
			  "    },\n    \"files\"") != NULL);
	CHECK(strstr(out, "\"attributes\": {\n      \"run_id\": 43,\n      \"bench\": \"startup\"\n"
			  "    }\n  }\n}\n") != NULL);
	{
		struct tm_manifest m2;

		if (parse_ok(out, &m2)) {
			char *again = emit(&m2);

			CHECK_STR(again, out);
			CHECK(tm_manifest_equal(&m, &m2));
			free(again);
			tm_manifest_fini(&m2);
		}
	}
	free(out);
	tm_manifest_clear_clocks(&m, "gpu.json");
	tm_manifest_clear_clocks(&m, "b.pftrace");
	tm_manifest_set_machine(&m, "b.pftrace", "");
	tm_manifest_set_trace_time(&m, TM_CLOCK_UNSET, NULL, NULL);
	tm_manifest_remove_attr(&m, "run_id");
	CHECK(!tm_manifest_is_trivial(&m));
	tm_manifest_remove_attr(&m, "bench");
	CHECK(tm_manifest_is_trivial(&m));
	CHECK(tm_manifest_file_get(&m, "nope", false) == NULL);
	CHECK(tm_manifest_file_get(&m, "gpu.json", false) != NULL);
	tm_manifest_fini(&m);
}

static void
test_escapes_emit(void)
{
	struct tm_manifest m;
	char *out;

	tm_manifest_init(&m);
	tm_manifest_set_machine(&m, "a\"b\\c\n\x01\x7f\xc3\xa9.json", "m");
	/* C1 and bidi controls as \u (safe to page), a byte that is not
	 * UTF-8 kept as it is (the path must name its member exactly) */
	tm_manifest_set_machine(&m, "\xc2\x9b\xe2\x80\xae\b\f\xff.json", "m");
	out = emit(&m);
	CHECK(strstr(out, "\"path\": \"a\\\"b\\\\c\\n\\u0001\\u007f\xc3\xa9.json\"") != NULL);
	CHECK(strstr(out, "\"path\": \"\\u009b\\u202e\\b\\f\xff.json\"") != NULL);
	free(out);
	tm_manifest_fini(&m);
}

/* Outdated syntax of merging-from-command-line: TP's error + our hint. */
static void
test_old_syntax(void)
{
	static const char doc_clocks[] =
		"{\n  \"perfetto_manifest\": {\n    \"version\": 1,\n    \"files\": [\n      {\n"
		"        \"path\": \"phone.pftrace\",\n        \"machine\": {\"name\": \"phone\"}\n"
		"      },\n      {\n        \"path\": \"watch.pftrace\",\n"
		"        \"machine\": {\"name\": \"watch\"},\n        \"clocks\": {\n"
		"          \"BOOTTIME\": {\"trace_time_offset_ns\": 5000000000}\n        }\n      }\n"
		"    ],\n    \"trace_time\": {\"machine\": \"phone\", \"clock\": \"BOOTTIME\"}\n  }\n}\n";
	static const char doc_machines[] =
		"{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"multi.pftrace\", "
		"\"machines\": {\"1\": {\"name\": \"phone\"}, \"2\": {\"name\": \"watch\"}}}]}}";
	static const char tt_only[] =
		"{\"perfetto_manifest\": {\"version\": 1, \"trace_time\": {\"machine\": \"phone\", "
		"\"clock\": \"BOOTTIME\"}, \"files\": [{\"path\": \"phone.pftrace\", \"machine\": "
		"{\"name\": \"phone\"}}]}}";
	static const char no_ref[] =
		"{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"w.pftrace\", "
		"\"clocks\": {\"MONOTONIC\": {\"trace_time_offset_ns\": -7}}}]}}";
	struct tm_manifest m;
	struct tm_error err;

	CHECK_INT(tm_manifest_parse(doc_clocks, strlen(doc_clocks), &m, &err), TM_ERR_MANIFEST);
	CHECK_STR(err.msg, P "clocks: a sync_to block is required. Manual clock handling relates "
			     "this file to a clock in another trace, e.g. \"sync_to\": {\"file\": "
			     "\"other.pb\"}.");
	CHECK(strstr(err.hint, "\"clocks\": {\"clock\": \"BOOTTIME\", \"sync_to\": {\"file\": "
			       "\"phone.pftrace\", \"clock\": \"BOOTTIME\"}, \"offset_ns\": "
			       "5000000000}") != NULL);
	CHECK(strstr(err.hint, "positive value moves the file later") != NULL);
	CHECK(strstr(err.hint, "\"trace_time\": {\"clock\": \"BOOTTIME\", \"file\": "
			       "\"phone.pftrace\"}") != NULL);
	tm_manifest_fini(&m);

	CHECK_INT(tm_manifest_parse(doc_machines, strlen(doc_machines), &m, &err), TM_ERR_MANIFEST);
	CHECK_STR(err.msg, P "machines must be an array");
	CHECK(strstr(err.hint, "\"machines\": [{\"id\": 1, \"name\": \"phone\"}, {\"id\": 2, \"name\": "
			       "\"watch\"}]") != NULL);
	tm_manifest_fini(&m);

	CHECK_INT(tm_manifest_parse(tt_only, strlen(tt_only), &m, &err), TM_ERR_MANIFEST);
	CHECK_STR(err.msg, P "trace_time: machine 'phone' needs trace_time: file too: a machine "
			     "name alone is ambiguous because embedded machine ids are scoped to "
			     "their trace.");
	CHECK(strncmp(err.hint, "trace_time.machine without trace_time.file", 42) == 0);
	CHECK(strstr(err.hint, "\"trace_time\": {\"clock\": \"BOOTTIME\", \"file\": "
			       "\"phone.pftrace\"}") != NULL);
	tm_manifest_fini(&m);

	CHECK_INT(tm_manifest_parse(no_ref, strlen(no_ref), &m, &err), TM_ERR_MANIFEST);
	CHECK(strstr(err.hint, "\"clocks\": {\"clock\": \"MONOTONIC\", \"sync_to\": {\"file\": "
			       "\"OTHER_FILE\", \"clock\": \"MONOTONIC\"}, \"offset_ns\": -7}") != NULL);
	CHECK(strstr(err.hint, "placeholder") != NULL);
	tm_manifest_fini(&m);

	/* a plain error gets no hint */
	CHECK_INT(tm_manifest_parse("{}", 2, &m, &err), TM_ERR_MANIFEST);
	CHECK_STR(err.hint, "");
	tm_manifest_fini(&m);
}

static bool
fake_find(void *ud, const char *path, size_t len, uint32_t *tid)
{
	const char *const *names = ud;

	for (uint32_t i = 0; names[i]; i++) {
		if (strlen(names[i]) == len && memcmp(names[i], path, len) == 0) {
			*tid = i + 1;
			return true;
		}
	}
	return false;
}

static void
test_apply(void)
{
	static const char *members[] = {"meta.json", "phone.pb", "server.pb", "x.json",
					      NULL};
	struct tm_manifest_archive_ops ops = {fake_find, (void *)members};
	struct tm_manifest_plan p;
	struct tm_manifest m;
	struct tm_error err;
	const char *j;

	/* test_sync_to_file_offset's manifest */
	j = "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"phone.pb\", \"machine\":"
	    " {\"name\": \"phone\"}}, {\"path\": \"server.pb\", \"machine\": {\"name\": \"server\"},"
	    " \"clocks\": {\"clock\": \"BOOTTIME\", \"offset_ns\": 500, \"sync_to\": {\"file\":"
	    " \"phone.pb\", \"clock\": \"BOOTTIME\"}}}]}}";
	if (!parse_ok(j, &m))
		return;
	CHECK_INT(tm_manifest_apply(&m, &ops, &p, &err), TM_OK);
	CHECK_INT(p.n_ensure, 4);
	CHECK(p.ensure[0].raw_id == ((int64_t)1 << 32));
	CHECK_STR(p.ensure[0].name, "phone");
	CHECK(p.ensure[1].raw_id == ((int64_t)1 << 32) + 1);
	CHECK(p.ensure[2].raw_id == ((int64_t)1 << 32) + 1 && !p.ensure[2].name);
	CHECK(p.ensure[3].raw_id == ((int64_t)1 << 32));
	CHECK_INT(p.n_edges, 1);
	CHECK_INT(p.edges[0].file, 1);
	CHECK_INT(p.edges[0].source_clock, TM_CLOCK_BOOTTIME);
	CHECK_INT(p.edges[0].source_ts, 0);
	CHECK_INT(p.edges[0].ref_ts, 500);
	tm_manifest_plan_fini(&p);
	tm_manifest_fini(&m);

	/* PIN of an absent file: 44 (archive) */
	j = "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"ghost.json\", \"clocks\":"
	    " {\"offset_ns\": -5, \"sync_to\": {\"file\": \"x.json\"}}}, {\"path\": \"x.json\"}]}}";
	if (!parse_ok(j, &m))
		return;
	CHECK_INT(tm_manifest_apply(&m, &ops, &p, &err), TM_ERR_MANIFEST);
	CHECK_STR(err.msg, P "clocks: could not resolve file 'ghost.json'. It must match the `path` "
			     "of an entry in the `files` array.");
	tm_manifest_plan_fini(&p);
	tm_manifest_fini(&m);

	/* without an archive the same manifest parses; the PIN edge is there */
	j = "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"a.json\", \"clocks\":"
	    " {\"offset_ns\": -5, \"sync_to\": {\"file\": \"x.json\"}}}, {\"path\": \"x.json\"}]}}";
	if (!parse_ok(j, &m))
		return;
	CHECK_INT(tm_manifest_apply(&m, NULL, &p, &err), TM_OK);
	CHECK_INT(p.n_edges, 1);
	CHECK_INT(p.edges[0].source_clock, TM_CLOCK_TRACE_FILE);
	CHECK_INT(p.edges[0].ref_clock, TM_CLOCK_TRACE_FILE);
	CHECK_INT(p.edges[0].source_ts, 5);
	CHECK_INT(p.edges[0].ref_ts, 0);
	CHECK(p.edges[0].source_raw == 0 && p.edges[0].ref_raw == 0);
	tm_manifest_plan_fini(&p);
	tm_manifest_fini(&m);

	/* 37: a declared table member must exist */
	j = F("{\"path\": \"t.bin\", \"__exported_table_schema\": {\"format\": 1, \"name\": \"x\", "
	      "\"row_count\": 0, \"columns\": []}}");
	if (!parse_ok(j, &m))
		return;
	CHECK_INT(tm_manifest_apply(&m, &ops, &p, &err), TM_ERR_MANIFEST);
	CHECK_STR(err.msg, P "table member 't.bin' is declared but not present in the archive");
	tm_manifest_plan_fini(&p);
	tm_manifest_fini(&m);

	/* shared names, embedded id 0, duplicates keep the first remap */
	j = F("{\"path\": \"r.pb\", \"machines\": [{\"id\": 7, \"name\": \"X\"}, {\"id\": 0, \"name\":"
	      " \"H\"}, {\"id\": 7, \"name\": \"R\"}]}, {\"path\": \"b.json\", \"machine\": {\"name\":"
	      " \"X\"}}");
	if (!parse_ok(j, &m))
		return;
	CHECK_INT(tm_manifest_apply(&m, NULL, &p, &err), TM_OK);
	CHECK_INT(p.n_ensure, 3);
	CHECK_STR(p.ensure[2].name, "R");
	CHECK(p.files[0].machine_raw == ((int64_t)1 << 32) + 1);
	CHECK_STR(p.files[0].machine_name, "H");
	CHECK(p.files[1].machine_raw == ((int64_t)1 << 32));
	CHECK(p.files[0].remap_raw[2] == ((int64_t)1 << 32) + 2);
	tm_manifest_plan_fini(&p);
	tm_manifest_fini(&m);
}

static void
test_clock_names(void)
{
	CHECK_STR(tm_clock_name(1), "REALTIME");
	CHECK_STR(tm_clock_name(2), "REALTIME_COARSE");
	CHECK_STR(tm_clock_name(5), "MONOTONIC_RAW");
	CHECK_STR(tm_clock_name(6), "BOOTTIME");
	CHECK_STR(tm_clock_name(9), "TSC");
	CHECK_STR(tm_clock_name(10), "PERF");
	CHECK_STR(tm_clock_name(11), "TRACE_FILE");
	CHECK_STR(tm_clock_name(64), "clock64");
	CHECK_STR(tm_clock_name(127), "clock127");
	CHECK_STR(tm_clock_name(128), "custom");
	CHECK_INT(tm_clock_from_name("BOOTTIME"), 6);
	CHECK_INT(tm_clock_from_name("MONOTONIC_COARSE"), 4);
	CHECK_INT(tm_clock_from_name("boottime"), 0);
	CHECK_INT(tm_clock_from_name("TSC"), 0);
	CHECK_INT(tm_clock_from_name(""), 0);
}

static void
test_durations(void)
{
	static const struct {
		const char *in;
		int64_t ns;
	} ok[] = {
		{"250ms", 250000000},
		{"-1.5s", -1500000000},
		{"500", 500},
		{"20us", 20000},
		{"20\xc2\xb5s", 20000},
		{"7ns", 7},
		{"+3 ms", 3000000},
		{" 1.000000001s ", 1000000001},
		{"0.5us", 500},
		{"9223372036854775807", INT64_MAX},
		{"-9223372036854775807ns", -INT64_MAX},
		{"9223372036.854775807s", INT64_MAX},
		{"0", 0},
	};
	static const char *const bad[] = {
		"", "ms", "1.5ns", "0.0000000001s", "1x", "9223372036854775808",
		"-9223372036854775808", "99999999999s", "--1", "1 m s",
	};
	struct tm_error err;
	struct tm_buf b;
	int64_t v;

	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		v = 12345;
		CHECK_INT(tm_parse_duration_ns(ok[i].in, &v, &err), TM_OK);
		CHECK(v == ok[i].ns);
		if (t_failed_) {
			snprintf(t_why_ + strlen(t_why_), sizeof t_why_ - strlen(t_why_), " [%s]",
				 ok[i].in);
			return;
		}
	}
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		CHECK_INT(tm_parse_duration_ns(bad[i], &v, &err), TM_ERR_INVALID);
		CHECK(err.msg[0] != 0);
		if (t_failed_) {
			snprintf(t_why_ + strlen(t_why_), sizeof t_why_ - strlen(t_why_), " [%s]",
				 bad[i]);
			return;
		}
	}
	CHECK(tm_parse_duration_ns("1.5ns", &v, &err) == TM_ERR_INVALID &&
	      strstr(err.msg, "fractional nanoseconds"));
	CHECK(tm_parse_duration_ns("-9223372036854775808", &v, &err) == TM_ERR_INVALID &&
	      strstr(err.msg, "out of range"));

	tm_buf_init(&b);
#define FMT(ns, s)                                                                                 \
	do {                                                                                       \
		tm_buf_reset(&b);                                                                  \
		tm_format_duration_ns(ns, &b);                                                     \
		CHECK_STR(b.data, s);                                                              \
	} while (0)
	FMT(250000000, "+250 ms");
	FMT(-1500000000, "-1.5 s");
	FMT(7, "+7 ns");
	FMT(0, "0 ns");
	FMT(1000000001, "+1.000000001 s");
	FMT(1234567, "+1.234567 ms");
	FMT(-20000, "-20 us");
	FMT(999, "+999 ns");
	FMT(INT64_MAX, "+9223372036.854775807 s");
	FMT(INT64_MIN, "-9223372036.854775808 s");
#undef FMT
	/* format -> parse is the identity */
	{
		static const int64_t vals[] = {1, -1, 999, 1000, 1001, 250000000, -1500000000,
					       INT64_MAX, -INT64_MAX, 5000000000};
		for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
			tm_buf_reset(&b);
			tm_format_duration_ns(vals[i], &b);
			CHECK_INT(tm_parse_duration_ns(b.data, &v, &err), TM_OK);
			CHECK(v == vals[i]);
		}
	}
	tm_buf_fini(&b);
}

/* Generated from tests/conformance/cases/<case>/input.zip or input.tar (the
 * members starting with {"perfetto_manifest") and case.json "expected". */
static const struct conf_case {
	const char *name;
	const char *json;
	const char *error; /* substring, NULL: parses */
} conf_cases[] = {
	{"TraceManifest__attributes/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"attributes\": {\"benchmark\": \"startup\", \"run_id\": 42}}}",
	 NULL},
	{"TraceManifest__clockless_manual_cross_machine/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"phone.pb\", \"machine\": {\"name\": \"phone\"}}, {\"path\": \"app.json\", \"machine\": {\"name\": \"server\"}, \"clocks\": {\"offset_ns\": 500, \"sync_to\": {\"file\": \"phone.pb\", \"clock\": \"BOOTTIME\"}}}]}}",
	 NULL},
	{"TraceManifest__cross_domain_clocks_not_assumed/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"trace_time\": {\"clock\": \"REALTIME\"}, \"files\": [{\"path\": \"a.pb\", \"machine\": {\"name\": \"phone\"}}, {\"path\": \"b.pb\", \"machine\": {\"name\": \"server\"}}]}}",
	 NULL},
	{"TraceManifest__cross_domain_drop_is_logged/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"trace_time\": {\"clock\": \"REALTIME\"}, \"files\": [{\"path\": \"a.pb\", \"machine\": {\"name\": \"phone\"}}, {\"path\": \"b.pb\", \"machine\": {\"name\": \"server\"}}]}}",
	 NULL},
	{"TraceManifest__detected_and_processed_first/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"app.json\"}]}}",
	 NULL},
	{"TraceManifest__detected_in_tar/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"app.json\"}]}}",
	 NULL},
	{"TraceManifest__error_attributes_bad_value/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"attributes\": {\"flags\": [\"a\", \"b\"]}}}",
	 "perfetto_manifest: attributes: 'flags' must be a string or an integer"},
	{"TraceManifest__error_clock_override_on_metadata_file/meta1.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"meta2.json\", \"clocks\": {\"sync_to\": {\"file\": \"app.json\", \"clock\": \"BOOTTIME\"}}}, {\"path\": \"app.json\"}]}}",
	 NULL},
	{"TraceManifest__error_clock_override_on_metadata_file/meta2.json",
	 "{\"perfetto_manifest\": {\"version\": 1}}",
	 NULL},
	{"TraceManifest__error_machine_and_machines_exclusive/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"app.json\", \"machine\": {\"name\": \"a\"}, \"machines\": [{\"id\": 0, \"name\": \"b\"}]}]}}",
	 "perfetto_manifest: machine and machines are mutually exclusive"},
	{"TraceManifest__error_machine_empty/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"app.json\", \"machine\": {\"name\": \"\"}}]}}",
	 "perfetto_manifest: machine: name must be non-empty"},
	{"TraceManifest__error_machines_id_out_of_range/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"app.json\", \"machines\": [{\"id\": 4294967296, \"name\": \"vm\"}]}]}}",
	 "perfetto_manifest: machines: id must be in [0, 4294967295]"},
	{"TraceManifest__error_machines_undeclared_id/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"multi.pb\", \"machines\": [{\"id\": 0, \"name\": \"phone\"}]}]}}",
	 NULL},
	{"TraceManifest__error_missing_version/meta.json",
	 "{\"perfetto_manifest\": {}}",
	 "perfetto_manifest: missing required field: version"},
	{"TraceManifest__error_multi_machine_source_needs_machine/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"multi.pb\", \"machines\": [{\"id\": 0, \"name\": \"phone\"}, {\"id\": 7, \"name\": \"vm\"}], \"clocks\": {\"clock\": \"BOOTTIME\", \"sync_to\": {\"file\": \"server.pb\", \"clock\": \"BOOTTIME\"}}}, {\"path\": \"server.pb\", \"machine\": {\"name\": \"server\"}}]}}",
	 "perfetto_manifest: clocks: file 'multi.pb' is a multi-machine trace; name which machine the clock is on with clocks: machine."},
	{"TraceManifest__error_multiple_configs/meta1.json",
	 "{\"perfetto_manifest\": {\"version\": 1}}",
	 NULL},
	{"TraceManifest__error_multiple_configs/meta2.json",
	 "{\"perfetto_manifest\": {\"version\": 1}}",
	 NULL},
	{"TraceManifest__error_proto_multi_clock/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"spine.pb\", \"clocks\": {\"sync_to\": {\"file\": \"app.json\", \"clock\": \"BOOTTIME\"}}}, {\"path\": \"app.json\"}]}}",
	 NULL},
	{"TraceManifest__error_proto_multi_machine_clock_override/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"spine.pb\", \"clocks\": {\"sync_to\": {\"file\": \"app.json\", \"clock\": \"BOOTTIME\"}}}, {\"path\": \"app.json\"}]}}",
	 NULL},
	{"TraceManifest__error_proto_multi_machine_machine_override/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"spine.pb\", \"machine\": {\"name\": \"vm\"}}]}}",
	 NULL},
	{"TraceManifest__error_source_machine_unknown/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"a.pb\", \"machine\": {\"name\": \"phone\"}, \"clocks\": {\"machine\": \"ghost\", \"clock\": \"BOOTTIME\", \"sync_to\": {\"file\": \"b.pb\", \"clock\": \"BOOTTIME\"}}}, {\"path\": \"b.pb\", \"machine\": {\"name\": \"srv\"}}]}}",
	 "perfetto_manifest: clocks: machine 'ghost' is not a machine declared by file 'a.pb'."},
	{"TraceManifest__error_sync_to_file_multi_machine_needs_machine/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"multi.pb\", \"machines\": [{\"id\": 0, \"name\": \"phone\"}, {\"id\": 7, \"name\": \"vm\"}]}, {\"path\": \"server.pb\", \"machine\": {\"name\": \"server\"}, \"clocks\": {\"clock\": \"BOOTTIME\", \"offset_ns\": 500, \"sync_to\": {\"file\": \"multi.pb\", \"clock\": \"BOOTTIME\"}}}]}}",
	 "perfetto_manifest: clocks: sync_to.file 'multi.pb' is a multi-machine trace; also name the machine with clocks: sync_to.machine"},
	{"TraceManifest__error_sync_to_file_unknown/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"a.pb\", \"machine\": {\"name\": \"phone\"}, \"clocks\": {\"clock\": \"BOOTTIME\", \"offset_ns\": 1, \"sync_to\": {\"file\": \"ghost.pb\", \"clock\": \"BOOTTIME\"}}}]}}",
	 "perfetto_manifest: clocks: sync_to.file names unknown file 'ghost.pb'"},
	{"TraceManifest__error_sync_to_machine_not_in_file/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"multi.pb\", \"machines\": [{\"id\": 0, \"name\": \"phone\"}, {\"id\": 7, \"name\": \"vm\"}]}, {\"path\": \"server.pb\", \"machine\": {\"name\": \"server\"}, \"clocks\": {\"clock\": \"BOOTTIME\", \"offset_ns\": 500, \"sync_to\": {\"file\": \"multi.pb\", \"machine\": \"ghost\", \"clock\": \"BOOTTIME\"}}}]}}",
	 "perfetto_manifest: clocks: sync_to.machine 'ghost' is not a machine declared by file 'multi.pb'"},
	{"TraceManifest__error_sync_to_without_file/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"a.pb\", \"machine\": {\"name\": \"phone\"}, \"clocks\": {\"clock\": \"BOOTTIME\", \"offset_ns\": 1, \"sync_to\": {\"machine\": \"phone\", \"clock\": \"BOOTTIME\"}}}]}}",
	 "perfetto_manifest: clocks: sync_to.file is required"},
	{"TraceManifest__error_trace_time_file_unknown/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"trace_time\": {\"file\": \"ghost.pb\", \"clock\": \"BOOTTIME\"}, \"files\": [{\"path\": \"a.json\"}]}}",
	 "perfetto_manifest: trace_time: file names unknown file 'ghost.pb'"},
	{"TraceManifest__error_unknown_clock_name/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"trace_time\": {\"clock\": \"BOOTIME\"}}}",
	 "perfetto_manifest: unknown clock name: BOOTIME"},
	{"TraceManifest__error_unsupported_version/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 99}}",
	 "perfetto_manifest: unsupported version: 99"},
	{"TraceManifest__error_version_not_integer/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1.5}}",
	 "perfetto_manifest: version must be an integer"},
	{"TraceManifest__json_only_trace_time_clock/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"trace_time\": {\"clock\": \"BOOTTIME\"}}}",
	 NULL},
	{"TraceManifest__machine_assignment_merges_with_proto/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"app.json\", \"machine\": {\"name\": \"vm\"}}, {\"path\": \"spine.pb\", \"machines\": [{\"id\": 7, \"name\": \"vm\"}]}]}}",
	 NULL},
	{"TraceManifest__machine_label_index/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"host.json\"}, {\"path\": \"vm.json\", \"machine\": {\"name\": \"vm\"}}]}}",
	 NULL},
	{"TraceManifest__machine_name_assignment/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"app.json\", \"machine\": {\"name\": \"phone\"}}]}}",
	 NULL},
	{"TraceManifest__machine_name_dedup/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"a.json\", \"machine\": {\"name\": \"phone\"}}, {\"path\": \"b.json\", \"machine\": {\"name\": \"phone\"}}, {\"path\": \"c.json\", \"machine\": {\"name\": \"watch\"}}]}}",
	 NULL},
	{"TraceManifest__machine_override_with_sibling_proto/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"m7.pb\", \"machine\": {\"name\": \"vm\"}}]}}",
	 NULL},
	{"TraceManifest__machines_embedded_ids_scoped_per_file/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"p.pb\", \"machines\": [{\"id\": 0, \"name\": \"pa\"}, {\"id\": 7, \"name\": \"pb\"}]}, {\"path\": \"q.pb\", \"machines\": [{\"id\": 0, \"name\": \"qa\"}, {\"id\": 7, \"name\": \"qb\"}]}]}}",
	 NULL},
	{"TraceManifest__machines_remap/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"multi.pb\", \"machines\": [{\"id\": 0, \"name\": \"phone\"}, {\"id\": 7, \"name\": \"vm\"}]}]}}",
	 NULL},
	{"TraceManifest__machines_remote_clock_sync/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"multi.pb\", \"machines\": [{\"id\": 0, \"name\": \"host\"}, {\"id\": 7, \"name\": \"vm\"}]}]}}",
	 NULL},
	{"TraceManifest__machines_shared_name_merges/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"p.pb\", \"machines\": [{\"id\": 0, \"name\": \"host_p\"}, {\"id\": 7, \"name\": \"shared\"}]}, {\"path\": \"q.pb\", \"machines\": [{\"id\": 0, \"name\": \"host_q\"}, {\"id\": 7, \"name\": \"shared\"}]}]}}",
	 NULL},
	{"TraceManifest__machines_two_siblings_merge_distinct/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"host.json\", \"machine\": {\"name\": \"host\"}}, {\"path\": \"vm.json\", \"machine\": {\"name\": \"vm\"}}, {\"path\": \"spine.pb\", \"machines\": [{\"id\": 0, \"name\": \"host\"}, {\"id\": 7, \"name\": \"vm\"}]}]}}",
	 NULL},
	{"TraceManifest__multi_machine_source_clock/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"trace_time\": {\"file\": \"server.pb\", \"clock\": \"BOOTTIME\"}, \"files\": [{\"path\": \"multi.pb\", \"machines\": [{\"id\": 0, \"name\": \"phone\"}, {\"id\": 7, \"name\": \"vm\"}], \"clocks\": {\"machine\": \"vm\", \"clock\": \"BOOTTIME\", \"offset_ns\": 500, \"sync_to\": {\"file\": \"server.pb\", \"clock\": \"BOOTTIME\"}}}, {\"path\": \"server.pb\", \"machine\": {\"name\": \"server\"}}]}}",
	 NULL},
	{"TraceManifest__no_realtime_on_peer_falls_back/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"a.pb\", \"machine\": {\"name\": \"phone\"}}, {\"path\": \"b.pb\", \"machine\": {\"name\": \"server\"}}]}}",
	 NULL},
	{"TraceManifest__no_realtime_on_trace_time_machine_falls_back/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"a.pb\", \"machine\": {\"name\": \"phone\"}}, {\"path\": \"b.pb\", \"machine\": {\"name\": \"server\"}}]}}",
	 NULL},
	{"TraceManifest__realtime_beats_boottime/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"a.pb\", \"machine\": {\"name\": \"phone\"}}, {\"path\": \"b.pb\", \"machine\": {\"name\": \"server\"}}]}}",
	 NULL},
	{"TraceManifest__realtime_three_machines/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"a.pb\", \"machine\": {\"name\": \"phone\"}}, {\"path\": \"b.pb\", \"machine\": {\"name\": \"server\"}}, {\"path\": \"c.pb\", \"machine\": {\"name\": \"watch\"}}]}}",
	 NULL},
	{"TraceManifest__realtime_two_machines/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"a.pb\", \"machine\": {\"name\": \"phone\"}}, {\"path\": \"b.pb\", \"machine\": {\"name\": \"server\"}}]}}",
	 NULL},
	{"TraceManifest__same_domain_boottime_overlay/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"a.pb\", \"machine\": {\"name\": \"phone\"}}, {\"path\": \"b.pb\", \"machine\": {\"name\": \"server\"}}]}}",
	 NULL},
	{"TraceManifest__standalone_config/input.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"trace_time\": {\"clock\": \"REALTIME\"}}}",
	 NULL},
	{"TraceManifest__sync_to_clock_omitted_clockless_ref/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"a.json\"}, {\"path\": \"b.json\", \"clocks\": {\"offset_ns\": 500, \"sync_to\": {\"file\": \"a.json\"}}}]}}",
	 NULL},
	{"TraceManifest__sync_to_file_machine_offset/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"trace_time\": {\"file\": \"multi.pb\", \"machine\": \"vm\", \"clock\": \"BOOTTIME\"}, \"files\": [{\"path\": \"multi.pb\", \"machines\": [{\"id\": 0, \"name\": \"phone\"}, {\"id\": 7, \"name\": \"vm\"}]}, {\"path\": \"server.pb\", \"machine\": {\"name\": \"server\"}, \"clocks\": {\"clock\": \"BOOTTIME\", \"offset_ns\": 500, \"sync_to\": {\"file\": \"multi.pb\", \"machine\": \"vm\", \"clock\": \"BOOTTIME\"}}}]}}",
	 NULL},
	{"TraceManifest__sync_to_file_offset/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"phone.pb\", \"machine\": {\"name\": \"phone\"}}, {\"path\": \"server.pb\", \"machine\": {\"name\": \"server\"}, \"clocks\": {\"clock\": \"BOOTTIME\", \"offset_ns\": 500, \"sync_to\": {\"file\": \"phone.pb\", \"clock\": \"BOOTTIME\"}}}]}}",
	 NULL},
	{"TraceManifest__sync_to_machine_offset/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"phone.pb\", \"machine\": {\"name\": \"phone\"}}, {\"path\": \"server.pb\", \"machine\": {\"name\": \"server\"}, \"clocks\": {\"clock\": \"BOOTTIME\", \"offset_ns\": 500, \"sync_to\": {\"file\": \"phone.pb\", \"machine\": \"phone\", \"clock\": \"BOOTTIME\"}}}]}}",
	 NULL},
	{"TraceManifest__trace_time_clock_realtime/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"trace_time\": {\"clock\": \"REALTIME\"}}}",
	 NULL},
	{"TraceManifest__trace_time_file/meta.json",
	 "{\"perfetto_manifest\": {\"version\": 1, \"trace_time\": {\"file\": \"server.pb\", \"clock\": \"BOOTTIME\"}, \"files\": [{\"path\": \"phone.pb\", \"machine\": {\"name\": \"phone\"}}, {\"path\": \"server.pb\", \"machine\": {\"name\": \"server\"}, \"clocks\": {\"clock\": \"BOOTTIME\", \"offset_ns\": 500, \"sync_to\": {\"file\": \"phone.pb\", \"clock\": \"BOOTTIME\"}}}]}}",
	 NULL},
};

/* Every manifest member of the conformance corpus: the parse-time error
 * trace_processor prints (case.json `expected`), or a clean parse whose
 * canonical emission round-trips. */
static void
test_conformance(void)
{
	for (size_t i = 0; i < sizeof conf_cases / sizeof conf_cases[0]; i++) {
		const struct conf_case *c = &conf_cases[i];
		struct tm_manifest m, m2;
		struct tm_error err;
		enum tm_status s;

		s = tm_manifest_parse(c->json, strlen(c->json), &m, &err);
		if (c->error) {
			CHECK_INT(s, TM_ERR_MANIFEST);
			CHECK(strstr(err.msg, c->error) != NULL);
		} else {
			CHECK_INT(s, TM_OK);
			if (s == TM_OK) {
				char *a = emit(&m), *b;

				CHECK_INT(tm_manifest_parse(a, strlen(a), &m2, &err), TM_OK);
				b = emit(&m2);
				CHECK_STR(b, a);
				CHECK(tm_manifest_equal(&m, &m2));
				free(a);
				free(b);
				tm_manifest_fini(&m2);
			}
		}
		tm_manifest_fini(&m);
		if (t_failed_) {
			snprintf(t_why_ + strlen(t_why_), sizeof t_why_ - strlen(t_why_),
				 " [%s: %s]", c->name, s == TM_OK ? "ok" : err.msg);
			return;
		}
	}
}

/* A manifest cut short: trace_processor's text is "Failed to parse object: "
 * (its iterator's status is empty on incomplete input) and stays so; our hint
 * says where the text ends and what was expected there. */
static void
test_truncated(void)
{
	static const struct {
		const char *json, *msg, *hint;
	} c[] = {
		{"{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"a.pf",
		 "Failed to parse object: ",
		 "the JSON text ends at byte 61, before the '\"' that closes a string: the "
		 "manifest is truncated"},
		{"{\"perfetto_manifest\": {\"version\": 1,", "Failed to parse object: ",
		 "the JSON text ends at byte 36, before a member name, its ':' and a value: the "
		 "manifest is truncated"},
		{"{\"perfetto_manifest\": {\"version\": 1", "Failed to parse object: ",
		 "the JSON text ends at byte 35, before the rest of a value: the manifest is "
		 "truncated"},
		{"{\"perfetto_manifest\": {\"version\": 1 ", "Failed to parse object: ",
		 "the JSON text ends at byte 36, before ',' or '}' after a member: the manifest "
		 "is truncated"},
		{"{\"perfetto_manifest\": {\"files\": [", "Failed to parse object: ",
		 "the JSON text ends at byte 33, before a value or ']': the manifest is truncated"},
		{"{\"perfetto_manifest\": {\"files\": [tru", "Failed to parse array: ",
		 "the JSON text ends at byte 36, before the rest of a value: the manifest is "
		 "truncated"},
		{"{ ", "Failed to start parsing: ",
		 "the JSON text ends at byte 2, before a member or '}': the manifest is truncated"},
		/* the iterator's status is sticky: an earlier overflow is the text */
		{"{\"perfetto_manifest\": {\"x\": 99999999999999999999, \"y\": ",
		 "Failed to parse object: Integer overflow parsing '99999999999999999999'",
		 "the JSON text ends at byte 55, before a member name, its ':' and a value: the "
		 "manifest is truncated"},
	};

	for (size_t i = 0; i < sizeof c / sizeof c[0] && !t_failed_; i++) {
		struct tm_manifest m;
		struct tm_error err;

		CHECK_INT(tm_manifest_parse(c[i].json, strlen(c[i].json), &m, &err),
			  TM_ERR_MANIFEST);
		CHECK_STR(err.msg, c[i].msg);
		CHECK_STR(err.hint, c[i].hint);
		tm_manifest_fini(&m);
		if (t_failed_)
			snprintf(t_why_ + strlen(t_why_), sizeof t_why_ - strlen(t_why_),
				 " [case %zu]", i);
	}
}

/* Issue 25 item 8: the outdated syntax converted with what the input's
 * files are means what it meant (the clock the file's timestamps are in,
 * a PIN for a clockless file, trace time's owner as the reference, listed
 * in files[], a multi-machine reference's machine), says what cannot be
 * expressed, and prints without tabs. */
static void
test_convert_outdated(void)
{
	static const uint32_t phone_c[] = {TM_CLOCK_REALTIME, TM_CLOCK_MONOTONIC, TM_CLOCK_BOOTTIME};
	static const uint32_t watch_c[] = {TM_CLOCK_REALTIME, TM_CLOCK_BOOTTIME};
	const struct tm_convert_file files[] = {
		{"phone.pftrace", false, TM_CLOCK_BOOTTIME, 3, phone_c},
		{"watch.pftrace", false, TM_CLOCK_BOOTTIME, 2, watch_c},
		{"relay.pftrace", false, TM_CLOCK_BOOTTIME, 2, watch_c},
		{"app.json", true, TM_CLOCK_UNSET, 0, NULL},
	};
	const struct tm_convert_ctx ctx = {4, files, "phone.pftrace", TM_CLOCK_BOOTTIME};
	const char *old =
		"{\"perfetto_manifest\": {\"version\": 1, \"files\": ["
		"{\"path\": \"watch.pftrace\", \"clocks\": {\"MONOTONIC\": {\"trace_time_offset_ns\": 5000000},"
		" \"BOOTTIME\": {\"trace_time_offset_ns\": 7}}},"
		"{\"path\": \"app.json\", \"clocks\": {\"BOOTTIME\": {\"trace_time_offset_ns\": -10000000}}},"
		"{\"path\": \"relay.pftrace\", \"machines\": {\"0\": {\"name\": \"relay\"}, \"7\": {\"name\": \"sensor-a\"}}}"
		"]}}";
	struct tm_buf out, notes;
	struct tm_error err;
	struct tm_manifest m;

	tm_buf_init(&out);
	tm_buf_init(&notes);
	tm_error_clear(&err);
	CHECK_INT(tm_manifest_convert_outdated(old, strlen(old), &ctx, &out, &notes, &err), TM_OK);
	CHECK(out.data && !strchr(out.data, '\t'));
	CHECK(notes.data && strstr(notes.data, "MONOTONIC (5000000) cannot be expressed"));
	CHECK_INT(tm_manifest_parse(out.data, out.len, &m, &err), TM_OK);
	const struct tm_manifest_file *w = tm_manifest_file_find(&m, "watch.pftrace");
	const struct tm_manifest_file *a = tm_manifest_file_find(&m, "app.json");
	CHECK(w && w->has_clocks && a && a->has_clocks);
	if (w && a && w->has_clocks && a->has_clocks) {
		CHECK_INT(w->clocks.clock, TM_CLOCK_BOOTTIME);
		CHECK_INT(w->clocks.offset_ns, 7);
		CHECK_STR(w->clocks.sync_file, "phone.pftrace");
		CHECK_INT(w->clocks.sync_clock, TM_CLOCK_BOOTTIME);
		CHECK_INT(a->clocks.clock, TM_CLOCK_UNSET); /* a PIN */
		CHECK_INT(a->clocks.offset_ns, -10000000);
	}
	CHECK(tm_manifest_file_find(&m, "phone.pftrace") != NULL); /* listed for sync_to */
	tm_manifest_fini(&m);

	/* trace time on a machine of a multi-machine file: sync_to names it */
	const char *old2 =
		"{\"perfetto_manifest\": {\"version\": 1, \"trace_time\": {\"machine\": \"sensor-a\", \"clock\": \"BOOTTIME\"},"
		" \"files\": [{\"path\": \"watch.pftrace\", \"clocks\": {\"BOOTTIME\": {\"trace_time_offset_ns\": 5}}},"
		"{\"path\": \"relay.pftrace\", \"machines\": {\"0\": {\"name\": \"relay\"}, \"7\": {\"name\": \"sensor-a\"}}}"
		"]}}";
	tm_buf_fini(&out);
	tm_buf_init(&out);
	CHECK_INT(tm_manifest_convert_outdated(old2, strlen(old2), &ctx, &out, NULL, &err), TM_OK);
	CHECK_INT(tm_manifest_parse(out.data ? out.data : "", out.len, &m, &err), TM_OK);
	w = tm_manifest_file_find(&m, "watch.pftrace");
	CHECK(w && w->has_clocks && w->clocks.sync_machine &&
	      strcmp(w->clocks.sync_machine, "sensor-a") == 0 &&
	      strcmp(w->clocks.sync_file, "relay.pftrace") == 0);
	CHECK_STR(m.tt_file, "relay.pftrace");
	tm_manifest_fini(&m);

	/* a clockless owner: the reference is its private timeline (no clock) */
	const struct tm_convert_file js[] = {{"a.json", true, TM_CLOCK_UNSET, 0, NULL},
					     {"b.json", true, TM_CLOCK_UNSET, 0, NULL}};
	const struct tm_convert_ctx jctx = {2, js, "a.json", 0};
	const char *old3 = "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": \"a.json\"},"
			   " {\"path\": \"b.json\", \"clocks\": {\"BOOTTIME\": {\"trace_time_offset_ns\": 5000000}}}]}}";
	tm_buf_fini(&out);
	tm_buf_init(&out);
	CHECK_INT(tm_manifest_convert_outdated(old3, strlen(old3), &jctx, &out, NULL, &err), TM_OK);
	CHECK_INT(tm_manifest_parse(out.data ? out.data : "", out.len, &m, &err), TM_OK);
	const struct tm_manifest_file *b = tm_manifest_file_find(&m, "b.json");
	CHECK(b && b->has_clocks && b->clocks.clock == TM_CLOCK_UNSET &&
	      b->clocks.sync_clock == TM_CLOCK_UNSET && b->clocks.offset_ns == 5000000);
	tm_manifest_fini(&m);
	tm_buf_fini(&out);
	tm_buf_fini(&notes);
}

int
main(void)
{
	RUN(test_errors);
	RUN(test_error_coverage);
	RUN(test_numbers);
	RUN(test_duplicates);
	RUN(test_round_trip_rich);
	RUN(test_dialog_shapes);
	RUN(test_escapes_emit);
	RUN(test_old_syntax);
	RUN(test_convert_outdated);
	RUN(test_apply);
	RUN(test_clock_names);
	RUN(test_durations);
	RUN(test_conformance);
	RUN(test_truncated);
	RUN(test_emit_astral_reads_back);
	return 0;
}
