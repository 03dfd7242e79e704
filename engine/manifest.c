/* SPDX-License-Identifier: MIT */
/*
 * Manifest model: parse, validate and emit perfetto_manifest JSON exactly as
 * trace_processor's reader (src/trace_processor/plugins/perfetto_manifest/
 * perfetto_manifest_reader.cc) reads it, plus clock names and durations.
 *
 * JSON.  trace_processor parses with its own iterator (util/json_parser.h,
 * util/json_value.cc), which differs from cJSON's grammar in ways a manifest
 * can hit: integers that fit are int64 and everything else (1.0, 1e3,
 * integers beyond int64) is a double; a trailing comma before a closer is
 * accepted; either closer ends any scope ("[}" is an empty array); unknown
 * escapes such as "\q" are dropped; bytes after the root value are ignored;
 * and its error texts ("Failed to parse object: Expected ',' or '}' after
 * value for key 'version'. Got 'x'") are its own.  cJSON's parser can
 * reproduce none of that (and keeps only a double per number), so this file
 * has a small parser that walks the input with trace_processor's rules and
 * builds the tree as cJSON nodes: objects, arrays, strings, bools and nulls
 * as usual, and every number as a cJSON raw node holding its exact token, so
 * numbers inside unknown fields are emitted byte for byte and known fields
 * are classified int64/double from the token the way trace_processor does.
 * Duplicate keys: the last value wins, at the position of the first (the
 * DOM is a std::map, so position never mattered to trace_processor).
 * What is NOT matched: trace_processor's DOM is a std::map keyed by
 * std::string, so a key or string with an escaped NUL ("\u0000") is cut at
 * the NUL here; and nesting deeper than 1000 levels fails here with our own
 * message (trace_processor recurses without a limit).
 *
 * Validation runs the reader's checks in its order (engine-semantics.md
 * section 7.6: 27-36 and 1-25 while parsing, then the attributes, then the
 * apply-time resolution 38-43 via tm_manifest_apply without an archive).
 * Object members are visited in std::map order where the reader iterates
 * them (attributes: byte order of the keys, so the first bad attribute in
 * that order is the one reported).
 *
 * Emission: JSON.stringify(v, null, 2) layout in the key order of Perfetto's
 * merge dialog, unknown keys after the known ones in their input order.
 * offset_ns is always written when clocks is (the dialog does the same, and
 * 0 is the reader's default, so nothing changes on a round trip).  The
 * unknown keys of machines[] entries are not kept (the model has no place
 * for them), and a double machines id (7.9) is stored truncated (7), as
 * trace_processor uses it.
 *
 * Outdated syntax (merging-from-command-line docs): a clocks map of clock
 * names with trace_time_offset_ns, a machines map keyed by id, and
 * trace_time.machine without trace_time.file get trace_processor's error
 * unchanged plus a hint with the valid JSON.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "internal.h"
#include "manifest_internal.h"

#define PFX "perfetto_manifest: "
#define MAX_DEPTH 1000

/* ------------------------------------------------------------------ */
/* JSON parser with trace_processor's grammar                          */
/* ------------------------------------------------------------------ */

enum rc { RC_OK, RC_ERR, RC_INCOMPLETE, RC_END };
enum scope { SC_NONE, SC_OBJ, SC_ARR };

struct jp {
	const char *cur, *end;
	char status[600]; /* sticky, as Iterator::status_ */
	char *key;        /* last key parsed anywhere (Iterator::key_) */
	size_t key_len;
	char msg[900];    /* the final error */
	int depth;
};

static void
jstatus(struct jp *p, const char *fmt, ...) TM_PRINTF(2, 3);
static void
jstatus(struct jp *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->status, sizeof p->status, fmt, ap);
	va_end(ap);
}

static bool
skip_ws(struct jp *p, const char **cur)
{
	while (*cur != p->end && (**cur == ' ' || **cur == '\t' || **cur == '\n' || **cur == '\r'))
		(*cur)++;
	return *cur != p->end;
}

static bool
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int
precision(const char *a, const char *b)
{
	size_t n = (size_t)(b - a);

	return n > 400 ? 400 : (int)n;
}

/* UnescapeString: \uXXXX to UTF-8 (no surrogates), unknown escapes dropped.
 * s..e is the content between the quotes; reads past e stop at the quote. */
static enum rc
unescape(struct jp *p, const char *s, const char *e, struct tm_buf *out)
{
	for (const char *it = s; it != e; ++it) {
		if (*it != '\\') {
			tm_buf_addc(out, *it);
			continue;
		}
		++it;
		switch (*it) {
		case '"': tm_buf_addc(out, '"'); break;
		case '\\': tm_buf_addc(out, '\\'); break;
		case '/': tm_buf_addc(out, '/'); break;
		case 'b': tm_buf_addc(out, '\b'); break;
		case 'f': tm_buf_addc(out, '\f'); break;
		case 'n': tm_buf_addc(out, '\n'); break;
		case 'r': tm_buf_addc(out, '\r'); break;
		case 't': tm_buf_addc(out, '\t'); break;
		case 'u': {
			uint32_t cp = 0;

			for (int j = 0; j < 4; ++j) {
				char h = *++it;

				cp <<= 4;
				if (h >= '0' && h <= '9') {
					cp += (uint32_t)(h - '0');
				} else if (h >= 'a' && h <= 'f') {
					cp += (uint32_t)(h - 'a' + 10);
				} else if (h >= 'A' && h <= 'F') {
					cp += (uint32_t)(h - 'A' + 10);
				} else {
					jstatus(p, "Invalid escape sequence: \\u%c%c%c%c", it[-3],
						it[-2], it[-1], h);
					return RC_ERR;
				}
			}
			if (cp <= 0x7f) {
				tm_buf_addc(out, (char)cp);
			} else if (cp <= 0x7ff) {
				tm_buf_addc(out, (char)(0xc0 | (cp >> 6)));
				tm_buf_addc(out, (char)(0x80 | (cp & 0x3f)));
			} else if (cp >= 0xd800 && cp <= 0xdfff) {
				jstatus(p,
					"Invalid escape sequence: \\u%c%c%c%c (code point %u is "
					"reserved for surrogate pairs)",
					it[-3], it[-2], it[-1], *it, cp);
				return RC_ERR;
			} else {
				tm_buf_addc(out, (char)(0xe0 | (cp >> 12)));
				tm_buf_addc(out, (char)(0x80 | ((cp >> 6) & 0x3f)));
				tm_buf_addc(out, (char)(0x80 | (cp & 0x3f)));
			}
			break;
		}
		default:
			break; /* lenient: the escaped character is dropped */
		}
	}
	return RC_OK;
}

/* ScanString + ParseString: *cur at the opening quote; out gets the text. */
static enum rc
parse_string(struct jp *p, const char **cur, struct tm_buf *out)
{
	const char *s, *q = *cur;

	if (*q != '"') {
		jstatus(p, "Expected '\"' at the start of string. Got '%c'", *q);
		return RC_ERR;
	}
	s = ++q;
	for (;;) {
		size_t bs = 0;

		q = memchr(q, '"', (size_t)(p->end - q));
		if (!q)
			return RC_INCOMPLETE;
		for (const char *b = q - 1; b >= s && *b == '\\'; b--)
			bs++;
		if ((bs & 1) == 0)
			break;
		++q;
	}
	tm_buf_reset(out);
	if (memchr(s, '\\', (size_t)(q - s))) {
		enum rc r = unescape(p, s, q, out);

		if (r != RC_OK)
			return r;
	} else {
		tm_buf_add(out, s, (size_t)(q - s));
	}
	if (!out->data)
		tm_buf_add(out, "", 0);
	*cur = q + 1;
	return RC_OK;
}

/* StringToInt64, including its quirk: after the INT64_MIN special case the
 * overflow test no longer fires (the value is negative), so the digits that
 * follow wrap around.  Returns false on overflow. */
static bool
tok_to_int64(const char *s, const char *e, int64_t *out)
{
	bool neg = false;
	int64_t v = 0;
	const int64_t div10 = INT64_MAX / 10;
	const int mod10 = (int)(INT64_MAX % 10);

	if (s != e && *s == '-') {
		neg = true;
		s++;
	}
	for (; s != e; s++) {
		int d = *s - '0';

		if (v > div10 || (v == div10 && d > mod10)) {
			if (!(neg && v == div10 && d == mod10 + 1))
				return false;
		}
		v = wrap_add(wrap_mul(v, 10), d);
	}
	*out = neg ? wrap_sub(0, v) : v;
	return true;
}

/* StringToDouble, with its int64/uint64 wrap-around accumulators. */
static bool
tok_to_double(const char *s, const char *e, double *out)
{
	bool neg = false, exp_neg = false;
	int64_t ip = 0, ep = 0;
	double frac = 0, v;

	if (s != e && *s == '-') {
		neg = true;
		s++;
	}
	for (; s != e && is_digit(*s); s++)
		ip = wrap_add(wrap_mul(ip, 10), *s - '0');
	if (s != e && *s == '.') {
		int64_t fi = 0;
		uint64_t div = 1;

		for (s++; s != e && is_digit(*s); s++) {
			fi = wrap_add(*s - '0', wrap_mul(fi, 10));
			div *= 10;
		}
		frac = (double)fi / (double)div;
	}
	if (s != e && (*s == 'e' || *s == 'E')) {
		s++;
		if (s != e && (*s == '+' || *s == '-'))
			exp_neg = *s++ == '-';
		for (; s != e && is_digit(*s); s++)
			ep = wrap_add(wrap_mul(ep, 10), *s - '0');
	}
	v = (double)ip + frac;
	if (exp_neg)
		v /= pow(10, (double)ep);
	else if (ep > 0)
		v *= pow(10, (double)ep);
	if (isinf(v) || isnan(v))
		return false;
	*out = neg ? -v : v;
	return true;
}

static bool
tok_is_int_like(const char *t)
{
	return !strpbrk(t, ".eE");
}

/* ParseNumber: validates the token and leaves the raw text in *node. */
static enum rc
parse_number(struct jp *p, const char **cur, cJSON **node)
{
	const char *s = *cur, *c = s;
	bool int_like = true;
	int64_t iv;
	double dv;
	char *tok;

	c += *c == '-';
	if (c != p->end && *c == '0') {
		++c;
		if (c != p->end && is_digit(*c)) {
			jstatus(p, "Invalid number: leading zero in '%.*s'", precision(s, p->end), s);
			return RC_ERR;
		}
	} else if (c != p->end && *c >= '1' && *c <= '9') {
		while (c != p->end && is_digit(*c))
			++c;
	} else if (c != p->end) {
		jstatus(p, "Invalid number: expected digit in '%.*s'", precision(s, p->end), s);
		return RC_ERR;
	}
	if (c != p->end && *c == '.') {
		const char *f = ++c;

		int_like = false;
		while (c != p->end && is_digit(*c))
			++c;
		if (c != p->end && c == f) {
			jstatus(p, "Invalid number: expected digit after '.' in '%.*s'",
				precision(s, p->end), s);
			return RC_ERR;
		}
	}
	if (c != p->end && (*c == 'e' || *c == 'E')) {
		const char *x;

		int_like = false;
		++c;
		c += c != p->end && (*c == '+' || *c == '-');
		x = c;
		while (c != p->end && is_digit(*c))
			++c;
		if (c != p->end && c == x) {
			jstatus(p, "Invalid number: expected digit after 'e' in '%.*s'",
				precision(s, p->end), s);
			return RC_ERR;
		}
	}
	if (c == p->end)
		return RC_INCOMPLETE;
	if (int_like && tok_to_int64(s, c, &iv)) {
		/* int */
	} else {
		if (int_like)
			jstatus(p, "Integer overflow parsing '%.*s'", precision(s, c), s);
		if (!tok_to_double(s, c, &dv)) {
			jstatus(p, "Double overflow/underflow parsing '%.*s'", precision(s, c), s);
			return RC_ERR;
		}
	}
	tok = xstrndup(s, (size_t)(c - s));
	*node = cJSON_CreateRaw(tok);
	free(tok);
	if (!*node)
		abort();
	*cur = c;
	return RC_OK;
}

static enum rc
literal(struct jp *p, const char **cur, const char *word, cJSON **node, cJSON *made)
{
	size_t n = strlen(word);

	if ((size_t)(p->end - *cur) < n) {
		cJSON_Delete(made);
		return RC_INCOMPLETE;
	}
	if (memcmp(*cur, word, n) != 0) {
		jstatus(p, "Invalid token: expected '%s' but got '%.*s'", word, (int)n, *cur);
		cJSON_Delete(made);
		return RC_ERR;
	}
	*cur += n;
	*node = made;
	return RC_OK;
}

/* OnPostValue: after a value in scope sc. */
static enum rc
post_value(struct jp *p, const char **cur, enum scope sc)
{
	char endc = sc == SC_OBJ ? '}' : ']';

	if (!skip_ws(p, cur))
		return RC_INCOMPLETE;
	if (**cur == ',') {
		++*cur;
		if (!skip_ws(p, cur))
			return RC_INCOMPLETE;
	} else if (**cur != endc) {
		if (sc == SC_OBJ && p->key_len > 0)
			jstatus(p, "Expected ',' or '%c' after value for key '%.*s'. Got '%c'", endc,
				(int)p->key_len, p->key, **cur);
		else
			jstatus(p, "Expected ',' or '%c' after value. Got '%c'", endc, **cur);
		return RC_ERR;
	}
	return RC_OK;
}

/* ParseAndRecurse in scope sc (whose parent is parent).  On RC_OK either
 * *node is a primitive, or *open is '{'/'[' (a container was entered). */
static enum rc
step(struct jp *p, enum scope sc, enum scope parent, struct tm_buf *key, cJSON **node, char *open)
{
	const char *cur = p->cur;
	struct tm_buf sb;
	enum rc r;

	*node = NULL;
	*open = 0;
	if (*cur == '}' || *cur == ']') {
		++cur;
		if (parent != SC_NONE) {
			r = post_value(p, &cur, parent);
			if (r != RC_OK)
				return r;
		}
		p->cur = cur;
		return RC_END;
	}
	if (sc == SC_OBJ) {
		if (!skip_ws(p, &cur))
			return RC_INCOMPLETE;
		if (*cur != '"') {
			jstatus(p, "Expected '\"' at the start of key. Got '%c'", *cur);
			return RC_ERR;
		}
		r = parse_string(p, &cur, key);
		if (r != RC_OK)
			return r;
		free(p->key);
		p->key = xmalloc(key->len + 1);
		memcpy(p->key, key->data, key->len + 1);
		p->key_len = key->len;
		if (!skip_ws(p, &cur))
			return RC_INCOMPLETE;
		if (*cur != ':') {
			jstatus(p, "Expected ':' after key '%.*s'. Got '%c'", (int)p->key_len, p->key,
				*cur);
			return RC_ERR;
		}
		++cur;
		if (!skip_ws(p, &cur))
			return RC_INCOMPLETE;
	} else if (!skip_ws(p, &cur)) {
		return RC_INCOMPLETE;
	}
	if (*cur == '{' || *cur == '[') {
		*open = *cur++;
		if (!skip_ws(p, &cur))
			return RC_INCOMPLETE;
		p->cur = cur;
		return RC_OK;
	}
	switch (*cur) {
	case '"':
		tm_buf_init(&sb);
		r = parse_string(p, &cur, &sb);
		if (r == RC_OK) {
			*node = cJSON_CreateString(sb.data);
			if (!*node)
				abort();
		}
		tm_buf_fini(&sb);
		break;
	case 't': r = literal(p, &cur, "true", node, cJSON_CreateTrue()); break;
	case 'f': r = literal(p, &cur, "false", node, cJSON_CreateFalse()); break;
	case 'n': r = literal(p, &cur, "null", node, cJSON_CreateNull()); break;
	default: r = parse_number(p, &cur, node); break;
	}
	if (r != RC_OK)
		return r;
	r = post_value(p, &cur, sc);
	if (r != RC_OK) {
		cJSON_Delete(*node);
		*node = NULL;
		return r;
	}
	p->cur = cur;
	return RC_OK;
}

static void
obj_put(cJSON *obj, const char *key, cJSON *child)
{
	if (cJSON_GetObjectItemCaseSensitive(obj, key))
		cJSON_ReplaceItemInObjectCaseSensitive(obj, key, child);
	else
		cJSON_AddItemToObject(obj, key, child);
}

/* The loop of ParseRecursive (and Parse's root loop) for one container. */
static enum rc
parse_scope(struct jp *p, enum scope sc, enum scope parent, cJSON *node)
{
	struct tm_buf key;
	enum rc r = RC_OK;

	if (++p->depth > MAX_DEPTH) {
		snprintf(p->msg, sizeof p->msg,
			 "JSON nested deeper than %d levels (tracemerge limit)", MAX_DEPTH);
		return RC_ERR;
	}
	tm_buf_init(&key);
	for (;;) {
		cJSON *child;
		char open;
		char *k;

		r = step(p, sc, parent, &key, &child, &open);
		if (r == RC_END) {
			r = RC_OK;
			break;
		}
		if (r != RC_OK) {
			snprintf(p->msg, sizeof p->msg, "Failed to parse %s: %s",
				 sc == SC_OBJ ? "object" : "array", p->status);
			r = RC_ERR;
			break;
		}
		k = sc == SC_OBJ ? xstrdup(key.data) : NULL;
		if (open) {
			child = open == '{' ? cJSON_CreateObject() : cJSON_CreateArray();
			if (!child)
				abort();
			r = parse_scope(p, open == '{' ? SC_OBJ : SC_ARR, sc, child);
			if (r != RC_OK) {
				cJSON_Delete(child);
				free(k);
				break;
			}
		}
		if (sc == SC_OBJ)
			obj_put(node, k, child);
		else
			cJSON_AddItemToArray(node, child);
		free(k);
	}
	tm_buf_fini(&key);
	p->depth--;
	return r;
}

/* json::Parse.  Returns the root or NULL with msg set. */
static cJSON *
json_parse(const char *text, size_t len, char *msg, size_t msg_size)
{
	struct jp p;
	const char *cur;
	cJSON *root;
	bool is_obj;

	memset(&p, 0, sizeof p);
	if (len == 0) {
		snprintf(msg, msg_size, "Empty JSON input");
		return NULL;
	}
	p.cur = text;
	p.end = text + len;
	cur = text;
	if (!skip_ws(&p, &cur)) {
		snprintf(msg, msg_size,
			 "Failed to start parsing: Expected '{' or '[' at the start. Input is empty or "
			 "whitespace only.");
		return NULL;
	}
	if (*cur != '{' && *cur != '[') {
		snprintf(msg, msg_size,
			 "Failed to start parsing: Expected '{' or '[' at the start. Got '%c'", *cur);
		return NULL;
	}
	is_obj = *cur == '{';
	++cur;
	if (!skip_ws(&p, &cur)) {
		snprintf(msg, msg_size, "Failed to start parsing: ");
		return NULL;
	}
	p.cur = cur;
	root = is_obj ? cJSON_CreateObject() : cJSON_CreateArray();
	if (!root)
		abort();
	if (parse_scope(&p, is_obj ? SC_OBJ : SC_ARR, SC_NONE, root) != RC_OK) {
		snprintf(msg, msg_size, "%s", p.msg);
		cJSON_Delete(root);
		root = NULL;
	}
	free(p.key);
	return root;
}

/* ------------------------------------------------------------------ */
/* Dom accessors (trace_processor's json::Dom semantics on cJSON)       */
/* ------------------------------------------------------------------ */

static const cJSON *
member(const cJSON *o, const char *key)
{
	if (!cJSON_IsObject(o))
		return NULL;
	return cJSON_GetObjectItemCaseSensitive(o, key);
}

static bool
is_str(const cJSON *v)
{
	return v && cJSON_IsString(v);
}

static bool
is_num(const cJSON *v)
{
	return v && cJSON_IsRaw(v);
}

/* IsIntegral: an int64 in the DOM. */
static bool
is_int(const cJSON *v, int64_t *out)
{
	const char *t;
	int64_t dummy;

	if (!is_num(v))
		return false;
	t = v->valuestring;
	if (!tok_is_int_like(t))
		return false;
	return tok_to_int64(t, t + strlen(t), out ? out : &dummy);
}

/* AsInt64 of a number: a double is cast as x86 does (out of range or NaN
 * gives INT64_MIN, the "integer indefinite" value). */
static int64_t
as_int64(const cJSON *v)
{
	int64_t i;
	double d = 0;
	const char *t;

	if (is_int(v, &i))
		return i;
	if (!is_num(v))
		return 0;
	t = v->valuestring;
	if (!tok_to_double(t, t + strlen(t), &d))
		return INT64_MIN;
	if (isnan(d) || d >= 9223372036854775808.0 || d < -9223372036854775808.0)
		return INT64_MIN;
	return (int64_t)d;
}

/* Copies the members of o not listed in known (NULL-terminated) into a new
 * object, or NULL when there are none. */
static cJSON *
extras(const cJSON *o, const char *const *known)
{
	cJSON *x = NULL;
	const cJSON *c;

	cJSON_ArrayForEach(c, o) {
		bool k = false;

		for (size_t i = 0; known[i]; i++)
			if (strcmp(c->string, known[i]) == 0)
				k = true;
		if (k)
			continue;
		if (!x && !(x = cJSON_CreateObject()))
			abort();
		cJSON_AddItemToObject(x, c->string, cJSON_Duplicate(c, 1));
	}
	return x;
}

/* ------------------------------------------------------------------ */
/* Clock names                                                         */
/* ------------------------------------------------------------------ */

static const char *const manifest_clocks[] = {
	NULL, "REALTIME", "REALTIME_COARSE", "MONOTONIC", "MONOTONIC_COARSE", "MONOTONIC_RAW",
	"BOOTTIME",
};

/* Reentrant: every name is a string literal; ids 0..127 (builtin and
 * sequence-scoped clocks) get "clockN", anything above "custom". */
static const char *const generic_clocks[128] = {
	"clock0", "clock1", "clock2", "clock3", "clock4", "clock5", "clock6", "clock7", "clock8",
	"clock9", "clock10", "clock11", "clock12", "clock13", "clock14", "clock15", "clock16",
	"clock17", "clock18", "clock19", "clock20", "clock21", "clock22", "clock23", "clock24",
	"clock25", "clock26", "clock27", "clock28", "clock29", "clock30", "clock31", "clock32",
	"clock33", "clock34", "clock35", "clock36", "clock37", "clock38", "clock39", "clock40",
	"clock41", "clock42", "clock43", "clock44", "clock45", "clock46", "clock47", "clock48",
	"clock49", "clock50", "clock51", "clock52", "clock53", "clock54", "clock55", "clock56",
	"clock57", "clock58", "clock59", "clock60", "clock61", "clock62", "clock63", "clock64",
	"clock65", "clock66", "clock67", "clock68", "clock69", "clock70", "clock71", "clock72",
	"clock73", "clock74", "clock75", "clock76", "clock77", "clock78", "clock79", "clock80",
	"clock81", "clock82", "clock83", "clock84", "clock85", "clock86", "clock87", "clock88",
	"clock89", "clock90", "clock91", "clock92", "clock93", "clock94", "clock95", "clock96",
	"clock97", "clock98", "clock99", "clock100", "clock101", "clock102", "clock103",
	"clock104", "clock105", "clock106", "clock107", "clock108", "clock109", "clock110",
	"clock111", "clock112", "clock113", "clock114", "clock115", "clock116", "clock117",
	"clock118", "clock119", "clock120", "clock121", "clock122", "clock123", "clock124",
	"clock125", "clock126", "clock127",
};

const char *
tm_clock_name(uint32_t id)
{
	if (id >= 1 && id <= 6)
		return manifest_clocks[id];
	switch (id) {
	case TM_CLOCK_TSC: return "TSC";
	case TM_CLOCK_PERF: return "PERF";
	case TM_CLOCK_TRACE_FILE: return "TRACE_FILE";
	default: break;
	}
	return id < 128 ? generic_clocks[id] : "custom";
}

uint32_t
tm_clock_from_name(const char *name)
{
	if (!name)
		return TM_CLOCK_UNSET;
	for (uint32_t i = 1; i <= 6; i++)
		if (strcmp(name, manifest_clocks[i]) == 0)
			return i;
	return TM_CLOCK_UNSET;
}

/* ------------------------------------------------------------------ */
/* Model lifetime                                                      */
/* ------------------------------------------------------------------ */

void
tm_manifest_init(struct tm_manifest *m)
{
	memset(m, 0, sizeof *m);
	m->version = 1;
}

static void
clocks_fini(struct tm_manifest_clocks *c)
{
	free(c->machine);
	free(c->sync_file);
	free(c->sync_machine);
	cJSON_Delete(c->extra);
	cJSON_Delete(c->sync_extra);
	memset(c, 0, sizeof *c);
}

static void
machines_clear(struct tm_manifest_file *f)
{
	for (size_t i = 0; i < f->n_machines; i++)
		free(f->machines[i].name);
	free(f->machines);
	f->machines = NULL;
	f->n_machines = 0;
	f->has_machines = false;
}

static void
file_fini(struct tm_manifest_file *f)
{
	free(f->path);
	free(f->machine_name);
	cJSON_Delete(f->machine_extra);
	machines_clear(f);
	clocks_fini(&f->clocks);
	cJSON_Delete(f->extra);
	memset(f, 0, sizeof *f);
}

static void
attr_fini(struct tm_manifest_attr *a)
{
	free(a->key);
	free(a->sval);
}

void
tm_manifest_fini(struct tm_manifest *m)
{
	free(m->tt_file);
	free(m->tt_machine);
	cJSON_Delete(m->tt_extra);
	for (size_t i = 0; i < m->n_files; i++)
		file_fini(&m->files[i]);
	free(m->files);
	for (size_t i = 0; i < m->n_attrs; i++)
		attr_fini(&m->attrs[i]);
	free(m->attrs);
	cJSON_Delete(m->extra);
	cJSON_Delete(m->root_extra);
	tm_manifest_init(m);
}

static cJSON *
dup_json(const cJSON *j)
{
	cJSON *d;

	if (!j)
		return NULL;
	d = cJSON_Duplicate(j, 1);
	if (!d)
		abort();
	return d;
}

void
tm_manifest_copy(struct tm_manifest *dst, const struct tm_manifest *src)
{
	*dst = *src;
	dst->tt_file = xstrdup0(src->tt_file);
	dst->tt_machine = xstrdup0(src->tt_machine);
	dst->tt_extra = dup_json(src->tt_extra);
	dst->extra = dup_json(src->extra);
	dst->root_extra = dup_json(src->root_extra);
	dst->files = src->n_files ? xcalloc(src->n_files, sizeof *dst->files) : NULL;
	for (size_t i = 0; i < src->n_files; i++) {
		const struct tm_manifest_file *s = &src->files[i];
		struct tm_manifest_file *d = &dst->files[i];

		*d = *s;
		d->path = xstrdup0(s->path);
		d->machine_name = xstrdup0(s->machine_name);
		d->machine_extra = dup_json(s->machine_extra);
		d->machines = s->n_machines ? xcalloc(s->n_machines, sizeof *d->machines) : NULL;
		for (size_t j = 0; j < s->n_machines; j++) {
			d->machines[j].id = s->machines[j].id;
			d->machines[j].name = xstrdup0(s->machines[j].name);
		}
		d->clocks.machine = xstrdup0(s->clocks.machine);
		d->clocks.sync_file = xstrdup0(s->clocks.sync_file);
		d->clocks.sync_machine = xstrdup0(s->clocks.sync_machine);
		d->clocks.extra = dup_json(s->clocks.extra);
		d->clocks.sync_extra = dup_json(s->clocks.sync_extra);
		d->extra = dup_json(s->extra);
	}
	dst->attrs = src->n_attrs ? xcalloc(src->n_attrs, sizeof *dst->attrs) : NULL;
	for (size_t i = 0; i < src->n_attrs; i++) {
		dst->attrs[i] = src->attrs[i];
		dst->attrs[i].key = xstrdup0(src->attrs[i].key);
		dst->attrs[i].sval = xstrdup0(src->attrs[i].sval);
	}
}

static bool
str_eq(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return strcmp(a, b) == 0;
}

static bool
json_eq(const cJSON *a, const cJSON *b)
{
	if (!a || !b)
		return a == b;
	return cJSON_Compare(a, b, 1);
}

static bool
clocks_eq(const struct tm_manifest_clocks *a, const struct tm_manifest_clocks *b)
{
	return str_eq(a->machine, b->machine) && a->clock == b->clock &&
	       str_eq(a->sync_file, b->sync_file) && str_eq(a->sync_machine, b->sync_machine) &&
	       a->sync_clock == b->sync_clock && a->offset_ns == b->offset_ns &&
	       json_eq(a->extra, b->extra) && json_eq(a->sync_extra, b->sync_extra);
}

static bool
file_eq(const struct tm_manifest_file *a, const struct tm_manifest_file *b)
{
	if (!str_eq(a->path, b->path) || !str_eq(a->machine_name, b->machine_name) ||
	    !json_eq(a->machine_extra, b->machine_extra) || a->has_machines != b->has_machines ||
	    a->n_machines != b->n_machines || a->has_clocks != b->has_clocks ||
	    !json_eq(a->extra, b->extra))
		return false;
	for (size_t i = 0; i < a->n_machines; i++)
		if (a->machines[i].id != b->machines[i].id ||
		    !str_eq(a->machines[i].name, b->machines[i].name))
			return false;
	return !a->has_clocks || clocks_eq(&a->clocks, &b->clocks);
}

bool
tm_manifest_equal(const struct tm_manifest *a, const struct tm_manifest *b)
{
	if (a->version != b->version || a->has_trace_time != b->has_trace_time ||
	    a->has_files != b->has_files || a->n_files != b->n_files ||
	    a->has_attributes != b->has_attributes || a->n_attrs != b->n_attrs ||
	    !json_eq(a->extra, b->extra) || !json_eq(a->root_extra, b->root_extra))
		return false;
	if (a->has_trace_time &&
	    (a->tt_clock != b->tt_clock || !str_eq(a->tt_file, b->tt_file) ||
	     !str_eq(a->tt_machine, b->tt_machine) || !json_eq(a->tt_extra, b->tt_extra)))
		return false;
	for (size_t i = 0; i < a->n_files; i++)
		if (!file_eq(&a->files[i], &b->files[i]))
			return false;
	for (size_t i = 0; i < a->n_attrs; i++) {
		const struct tm_manifest_attr *x = &a->attrs[i], *y = &b->attrs[i];

		if (!str_eq(x->key, y->key) || x->is_int != y->is_int ||
		    (x->is_int ? x->ival != y->ival : !str_eq(x->sval, y->sval)))
			return false;
	}
	return true;
}

bool
tm_manifest_file_is_table(const struct tm_manifest_file *f)
{
	return f->extra && cJSON_GetObjectItemCaseSensitive(f->extra, "__exported_table_schema");
}

bool
tm_manifest_is_trivial(const struct tm_manifest *m)
{
	if (m->version != 1 || m->has_trace_time || m->n_attrs || m->extra || m->root_extra)
		return false;
	for (size_t i = 0; i < m->n_files; i++) {
		const struct tm_manifest_file *f = &m->files[i];

		if (f->machine_name || f->has_machines || f->has_clocks || f->extra ||
		    f->machine_extra)
			return false;
	}
	return true;
}

/* ------------------------------------------------------------------ */
/* Validation (OnPushDataToSorter, ParseFileEntry, ParseClocks, ...)    */
/* ------------------------------------------------------------------ */

static enum tm_status
merr(struct tm_error *err, const char *fmt, ...) TM_PRINTF(2, 3);
static enum tm_status
merr(struct tm_error *err, const char *fmt, ...)
{
	char buf[sizeof err->msg];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	return tm_error_set(err, TM_ERR_MANIFEST, "%s", buf);
}

static enum tm_status
clock_name(const cJSON *v, uint32_t *out, struct tm_error *err)
{
	if (!is_str(v))
		return merr(err, PFX "clock name must be a string");
	*out = tm_clock_from_name(v->valuestring);
	if (!*out)
		return merr(err,
			    PFX "unknown clock name: %s. Use one of REALTIME, REALTIME_COARSE, "
				"MONOTONIC, MONOTONIC_COARSE, MONOTONIC_RAW, BOOTTIME.",
			    v->valuestring);
	return TM_OK;
}

static enum tm_status
parse_clocks(const cJSON *c, struct tm_manifest_clocks *out, struct tm_error *err)
{
	static const char *const known[] = {"machine", "clock", "sync_to", "offset_ns", NULL};
	static const char *const sknown[] = {"file", "machine", "clock", NULL};
	const cJSON *v, *st;
	enum tm_status s;

	if ((v = member(c, "machine"))) {
		if (!is_str(v))
			return merr(err, PFX "clocks: machine must be a string");
		out->machine = xstrdup(v->valuestring);
	}
	if ((v = member(c, "clock")) && (s = clock_name(v, &out->clock, err)) != TM_OK)
		return s;
	if (!(st = member(c, "sync_to")))
		return merr(err, PFX "clocks: a sync_to block is required. Manual clock handling "
				     "relates this file to a clock in another trace, e.g. \"sync_to\": "
				     "{\"file\": \"other.pb\"}.");
	if (!cJSON_IsObject(st))
		return merr(err, PFX "clocks: sync_to must be an object");
	if (!is_str(v = member(st, "file")))
		return merr(err, PFX "clocks: sync_to.file is required and must be a string");
	out->sync_file = xstrdup(v->valuestring);
	if ((v = member(st, "machine"))) {
		if (!is_str(v))
			return merr(err, PFX "clocks: sync_to.machine must be a string");
		out->sync_machine = xstrdup(v->valuestring);
	}
	if ((v = member(st, "clock")) && (s = clock_name(v, &out->sync_clock, err)) != TM_OK)
		return s;
	if ((v = member(c, "offset_ns"))) {
		if (!is_int(v, &out->offset_ns))
			return merr(err, PFX "clocks: offset_ns must be an integer");
		if (out->offset_ns == INT64_MIN)
			return merr(err, PFX "clocks: offset_ns is out of range");
	}
	out->extra = extras(c, known);
	out->sync_extra = extras(st, sknown);
	return TM_OK;
}

static enum tm_status
check_table(const cJSON *t, struct tm_error *err)
{
	int64_t rows;
	const char *name;
	const cJSON *col;

	if (!cJSON_IsObject(t) || !is_int(member(t, "format"), NULL) ||
	    !is_str(member(t, "name")) || !is_int(member(t, "row_count"), &rows) ||
	    !cJSON_IsArray(member(t, "columns")))
		return merr(err, PFX "__exported_table_schema needs an integer format, a string "
				     "name, an integer row_count and a columns array");
	name = member(t, "name")->valuestring;
	if (rows < 0 || rows > (int64_t)UINT32_MAX)
		return merr(err, PFX "table '%s': invalid row_count", name);
	cJSON_ArrayForEach(col, member(t, "columns")) {
		if (!cJSON_IsObject(col) || !is_str(member(col, "name")) ||
		    !is_str(member(col, "type")) || !is_str(member(col, "nullability")) ||
		    !is_str(member(col, "sort")) || !is_str(member(col, "duplicates")))
			return merr(err, PFX "table '%s': malformed column entry", name);
	}
	return TM_OK;
}

static enum tm_status
parse_file(const cJSON *fe, struct tm_manifest_file *f, struct tm_error *err)
{
	static const char *const known[] = {"path", "machine", "machines", "clocks", NULL};
	static const char *const mknown[] = {"name", NULL};
	const cJSON *v, *mm;
	enum tm_status s;

	if (!cJSON_IsObject(fe) || !is_str(member(fe, "path")))
		return merr(err, PFX "files entries must be objects with a string path");
	f->path = xstrdup(member(fe, "path")->valuestring);
	if ((v = member(fe, "__exported_table_schema"))) {
		static const char *const tknown[] = {"path", NULL};

		if (member(fe, "clocks") || member(fe, "machine") || member(fe, "machines"))
			return merr(err,
				    PFX "'%s': an exported table is not a trace, so "
					"__exported_table_schema cannot be combined with "
					"clocks/machine/machines",
				    f->path);
		if ((s = check_table(v, err)) != TM_OK)
			return s;
		f->extra = extras(fe, tknown);
		return TM_OK;
	}
	if ((v = member(fe, "clocks"))) {
		if (!cJSON_IsObject(v))
			return merr(err, PFX "clocks must be an object");
		f->has_clocks = true;
		if ((s = parse_clocks(v, &f->clocks, err)) != TM_OK)
			return s;
	}
	if (member(fe, "machine") && member(fe, "machines"))
		return merr(err, PFX "machine and machines are mutually exclusive. Use `machine` for "
				     "a single-machine file, or `machines` to remap a multi-machine "
				     "proto's embedded ids; not both.");
	if ((mm = member(fe, "machine"))) {
		if (!cJSON_IsObject(mm) || !is_str(member(mm, "name")))
			return merr(err, PFX "machine must be an object with a string name, e.g. "
					     "\"machine\": {\"name\": \"phone\"}.");
		if (!*member(mm, "name")->valuestring)
			return merr(err, PFX "machine: name must be non-empty");
		f->machine_name = xstrdup(member(mm, "name")->valuestring);
		f->machine_extra = extras(mm, mknown);
	}
	if ((mm = member(fe, "machines"))) {
		const cJSON *e;
		size_t cap = 0;

		if (!cJSON_IsArray(mm))
			return merr(err, PFX "machines must be an array");
		f->has_machines = true;
		cJSON_ArrayForEach(e, mm) {
			int64_t id;

			if (!cJSON_IsObject(e) || !is_num(member(e, "id")) ||
			    !is_str(member(e, "name")))
				return merr(err, PFX "machines entries need an integer id and a string "
						     "name, e.g. \"machines\": [{\"id\": 0, \"name\": "
						     "\"phone\"}].");
			id = as_int64(member(e, "id"));
			if (id < 0 || id > (int64_t)UINT32_MAX)
				return merr(err, PFX "machines: id must be in [0, 4294967295]");
			if (!*member(e, "name")->valuestring)
				return merr(err, PFX "machines: name must be non-empty");
			XGROW(f->machines, cap, f->n_machines + 1);
			f->machines[f->n_machines].id = (uint32_t)id;
			f->machines[f->n_machines].name = xstrdup(member(e, "name")->valuestring);
			f->n_machines++;
		}
	}
	f->extra = extras(fe, known);
	return TM_OK;
}

static int
cmp_member_key(const void *a, const void *b)
{
	const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;

	return strcmp(x->string, y->string);
}

static enum tm_status
parse_attributes(const cJSON *o, struct tm_manifest *m, struct tm_error *err)
{
	const cJSON **sorted, *c;
	size_t n = 0, i;
	enum tm_status s = TM_OK;

	if (!cJSON_IsObject(o))
		return merr(err, PFX "attributes must be an object of string or integer values, "
				     "e.g. \"attributes\": {\"benchmark\": \"startup\"}.");
	m->has_attributes = true;
	n = (size_t)cJSON_GetArraySize(o);
	/* The reader walks std::map order: validate in byte order of keys. */
	sorted = xcalloc(n ? n : 1, sizeof *sorted);
	i = 0;
	cJSON_ArrayForEach(c, o)
		sorted[i++] = c;
	qsort(sorted, n, sizeof *sorted, cmp_member_key);
	for (i = 0; i < n && s == TM_OK; i++) {
		if (!*sorted[i]->string)
			s = merr(err, PFX "attributes: keys must be non-empty");
		else if (!is_str(sorted[i]) && !is_int(sorted[i], NULL))
			s = merr(err, PFX "attributes: '%s' must be a string or an integer",
				 sorted[i]->string);
	}
	free(sorted);
	if (s != TM_OK)
		return s;
	/* Kept in input order, for emission. */
	m->attrs = n ? xcalloc(n, sizeof *m->attrs) : NULL;
	cJSON_ArrayForEach(c, o) {
		struct tm_manifest_attr *a = &m->attrs[m->n_attrs++];

		a->key = xstrdup(c->string);
		a->is_int = is_int(c, &a->ival);
		if (!a->is_int)
			a->sval = xstrdup(c->valuestring);
	}
	return TM_OK;
}

static void old_syntax_hint(const cJSON *meta, struct tm_error *err);

static enum tm_status
validate(const cJSON *root, struct tm_manifest *m, struct tm_error *err)
{
	static const char *const rknown[] = {"perfetto_manifest", NULL};
	static const char *const known[] = {"version", "trace_time", "files", "attributes", NULL};
	static const char *const tknown[] = {"clock", "file", "machine", NULL};
	const cJSON *meta, *v, *tt, *e;
	enum tm_status s;
	size_t cap = 0;

	if (!cJSON_IsObject(root) || !cJSON_IsObject(meta = member(root, "perfetto_manifest")))
		return merr(err, PFX "expected a JSON object with a top-level perfetto_manifest key");
	if (!(v = member(meta, "version")))
		return merr(err, PFX "missing required field: version");
	if (!is_int(v, &m->version))
		return merr(err, PFX "version must be an integer");
	if (m->version != 1)
		return merr(err,
			    PFX "unsupported version: %" PRId64
				". Only version 1 is supported; set \"version\": 1.",
			    m->version);
	if ((tt = member(meta, "trace_time"))) {
		if (!cJSON_IsObject(tt))
			return merr(err, PFX "trace_time must be an object");
		if (!(v = member(tt, "clock")))
			return merr(err, PFX "trace_time needs a clock");
		if ((s = clock_name(v, &m->tt_clock, err)) != TM_OK)
			return s;
		m->has_trace_time = true;
		if ((v = member(tt, "file"))) {
			if (!is_str(v))
				return merr(err, PFX "trace_time: file must be a string");
			m->tt_file = xstrdup(v->valuestring);
		}
		if ((v = member(tt, "machine"))) {
			if (!is_str(v))
				return merr(err, PFX "trace_time: machine must be a string");
			m->tt_machine = xstrdup(v->valuestring);
		}
		m->tt_extra = extras(tt, tknown);
	}
	if ((v = member(meta, "files"))) {
		if (!cJSON_IsArray(v))
			return merr(err, PFX "files must be an array");
		m->has_files = true;
		cJSON_ArrayForEach(e, v) {
			XGROW(m->files, cap, m->n_files + 1);
			memset(&m->files[m->n_files], 0, sizeof m->files[0]);
			s = parse_file(e, &m->files[m->n_files++], err);
			if (s != TM_OK)
				return s;
		}
	}
	if ((v = member(meta, "attributes")) && (s = parse_attributes(v, m, err)) != TM_OK)
		return s;
	m->extra = extras(meta, known);
	m->root_extra = extras(root, rknown);
	return TM_OK;
}

enum tm_status
tm_manifest_parse(const char *text, size_t len, struct tm_manifest *out, struct tm_error *err)
{
	char msg[sizeof err->msg];
	struct tm_manifest_plan plan;
	enum tm_status s;
	cJSON *root;

	tm_manifest_init(out);
	if (err)
		tm_error_clear(err);
	root = json_parse(text, len, msg, sizeof msg);
	if (!root)
		return tm_error_set(err, TM_ERR_MANIFEST, "%s", msg);
	s = validate(root, out, err);
	if (s == TM_OK) {
		s = tm_manifest_apply(out, NULL, &plan, err);
		tm_manifest_plan_fini(&plan);
	}
	if (s != TM_OK) {
		if (err)
			old_syntax_hint(member(root, "perfetto_manifest"), err);
		tm_manifest_fini(out);
	}
	cJSON_Delete(root);
	return s;
}

/* ------------------------------------------------------------------ */
/* Apply (ApplyManifest), also the replay engine's entry               */
/* ------------------------------------------------------------------ */

struct names {
	size_t n, cap;
	const char **name;
	int64_t *raw;
};

static int64_t
name_raw(const struct names *nm, const char *name)
{
	for (size_t i = 0; i < nm->n; i++)
		if (strcmp(nm->name[i], name) == 0)
			return nm->raw[i];
	return -1;
}

static void
ensure(struct tm_manifest_plan *p, size_t *cap, int64_t raw, const char *name)
{
	XGROW(p->ensure, *cap, p->n_ensure + 1);
	p->ensure[p->n_ensure].raw_id = raw;
	p->ensure[p->n_ensure].name = name;
	p->n_ensure++;
}

static const struct tm_manifest_file *
find_entry(const struct tm_manifest *m, const char *path, size_t *idx)
{
	for (size_t i = 0; i < m->n_files; i++) {
		if (str_eq(m->files[i].path, path)) {
			if (idx)
				*idx = i;
			return &m->files[i];
		}
	}
	return NULL;
}

static bool
declares(const struct tm_manifest_plan *p, const struct tm_manifest *m, size_t idx,
	 const char *name)
{
	const struct tm_manifest_file *f = &m->files[idx];

	if (p->files[idx].machine_name && strcmp(p->files[idx].machine_name, name) == 0)
		return true;
	for (size_t i = 0; i < f->n_machines; i++)
		if (strcmp(f->machines[i].name, name) == 0)
			return true;
	return false;
}

static enum tm_status
resolve_ref(const struct tm_manifest *m, const struct tm_manifest_plan *p,
	    const struct names *nm, const char *flabel, const char *mlabel, const char *file,
	    const char *machine, int64_t fallback, int64_t *out, struct tm_error *err)
{
	size_t idx;

	if (machine && !file)
		return merr(err,
			    PFX "%s '%s' needs %s too: a machine name alone is ambiguous because "
				"embedded machine ids are scoped to their trace.",
			    mlabel, machine, flabel);
	if (!file) {
		*out = fallback;
		return TM_OK;
	}
	if (!find_entry(m, file, &idx))
		return merr(err,
			    PFX "%s names unknown file '%s'. It must match the `path` of an entry "
				"in the `files` array.",
			    flabel, file);
	if (!machine) {
		if (m->files[idx].n_machines)
			return merr(err,
				    PFX "%s '%s' is a multi-machine trace; also name the machine "
					"with %s.",
				    flabel, file, mlabel);
		*out = p->files[idx].machine_raw >= 0 ? p->files[idx].machine_raw : 0;
		return TM_OK;
	}
	if (!declares(p, m, idx, machine))
		return merr(err, PFX "%s '%s' is not a machine declared by file '%s'.", mlabel,
			    machine, file);
	*out = name_raw(nm, machine);
	return TM_OK;
}

static enum tm_status
find_tf(const struct tm_manifest_archive_ops *ops, const char *path, uint32_t *tid,
	struct tm_error *err)
{
	*tid = UINT32_MAX;
	if (!ops)
		return TM_OK;
	if (!ops->find_trace_file(ops->ud, path, tid))
		return merr(err,
			    PFX "clocks: could not resolve file '%s'. It must match the `path` of "
				"an entry in the `files` array.",
			    path);
	return TM_OK;
}

enum tm_status
tm_manifest_apply(const struct tm_manifest *m, const struct tm_manifest_archive_ops *ops,
		  struct tm_manifest_plan *p, struct tm_error *err)
{
	struct names nm = {0};
	size_t ecap = 0, gcap = 0;
	enum tm_status s = TM_OK;
	uint32_t tid;

	memset(p, 0, sizeof *p);
	p->n_files = m->n_files;
	p->files = m->n_files ? xcalloc(m->n_files, sizeof *p->files) : NULL;
	for (size_t i = 0; i < m->n_files; i++) {
		p->files[i].machine_raw = -1;
		p->files[i].is_table = tm_manifest_file_is_table(&m->files[i]);
	}
	/* 37: declared tables must be members (checked before ApplyManifest). */
	for (size_t i = 0; ops && i < m->n_files; i++)
		if (p->files[i].is_table && !ops->find_trace_file(ops->ud, m->files[i].path, &tid))
			return merr(err,
				    PFX "table member '%s' is declared but not present in the "
					"archive",
				    m->files[i].path);

	/* Step 1: one raw id per distinct name, in files[] order. */
	for (size_t i = 0; i < m->n_files; i++) {
		const struct tm_manifest_file *f = &m->files[i];
		const char *names[1] = {f->machine_name};

		if (f->has_machines)
			p->files[i].remap_raw = xcalloc(f->n_machines ? f->n_machines : 1,
							sizeof(int64_t));
		for (size_t j = 0; j < 1 + f->n_machines; j++) {
			const char *n = j == 0 ? names[0] : f->machines[j - 1].name;
			int64_t raw;

			if (!n)
				continue;
			raw = name_raw(&nm, n);
			if (raw < 0) {
				raw = TM_MANIFEST_FIRST_MACHINE_ID + (int64_t)nm.n;
				if (nm.n == nm.cap) {
					nm.cap = nm.cap ? 2 * nm.cap : 8;
					nm.name = xrealloc(nm.name, nm.cap * sizeof *nm.name);
					nm.raw = xrealloc(nm.raw, nm.cap * sizeof *nm.raw);
				}
				nm.name[nm.n] = n;
				nm.raw[nm.n++] = raw;
				ensure(p, &ecap, raw, n);
			}
			if (j == 0) {
				p->files[i].machine_raw = raw;
				p->files[i].machine_name = n;
				continue;
			}
			p->files[i].remap_raw[j - 1] = raw;
			if (f->machines[j - 1].id == 0) {
				p->files[i].machine_raw = raw;
				p->files[i].machine_name = n;
			}
		}
	}

	/* Step 2: trace_time. */
	if (m->has_trace_time && m->tt_clock) {
		p->has_trace_time = true;
		p->tt_clock = m->tt_clock;
		if (m->tt_file || m->tt_machine) {
			s = resolve_ref(m, p, &nm, "trace_time: file", "trace_time: machine",
					m->tt_file, m->tt_machine, 0, &p->tt_raw, err);
			if (s != TM_OK)
				goto out;
			p->tt_has_machine = true;
			ensure(p, &ecap, p->tt_raw, NULL);
		}
	}

	/* Step 3: override edges, in files[] order. */
	for (size_t i = 0; i < m->n_files; i++) {
		const struct tm_manifest_file *f = &m->files[i];
		const struct tm_manifest_clocks *c = &f->clocks;
		struct tm_manifest_edge ed = {0};

		if (!f->has_clocks || !c->sync_file || p->files[i].is_table)
			continue;
		ed.file = i;
		if (!c->machine) {
			if (f->n_machines) {
				s = merr(err,
					 PFX "clocks: file '%s' is a multi-machine trace; name which "
					     "machine the clock is on with clocks: machine.",
					 f->path);
				goto out;
			}
			ed.source_raw = p->files[i].machine_raw >= 0 ? p->files[i].machine_raw : 0;
		} else if (!declares(p, m, i, c->machine)) {
			s = merr(err, PFX "clocks: machine '%s' is not a machine declared by file '%s'.",
				 c->machine, f->path);
			goto out;
		} else {
			ed.source_raw = name_raw(&nm, c->machine);
		}
		s = resolve_ref(m, p, &nm, "clocks: sync_to.file", "clocks: sync_to.machine",
				c->sync_file, c->sync_machine, ed.source_raw, &ed.ref_raw, err);
		if (s != TM_OK)
			goto out;
		ensure(p, &ecap, ed.source_raw, NULL);
		ensure(p, &ecap, ed.ref_raw, NULL);
		if (c->clock) {
			ed.source_clock = c->clock;
		} else {
			ed.source_clock = TM_CLOCK_TRACE_FILE;
			if ((s = find_tf(ops, f->path, &ed.source_tf, err)) != TM_OK)
				goto out;
		}
		if (c->sync_clock) {
			ed.ref_clock = c->sync_clock;
		} else {
			ed.ref_clock = TM_CLOCK_TRACE_FILE;
			if ((s = find_tf(ops, c->sync_file, &ed.ref_tf, err)) != TM_OK)
				goto out;
		}
		ed.source_ts = c->offset_ns < 0 ? wrap_sub(0, c->offset_ns) : 0;
		ed.ref_ts = c->offset_ns > 0 ? c->offset_ns : 0;
		XGROW(p->edges, gcap, p->n_edges + 1);
		p->edges[p->n_edges++] = ed;
	}
out:
	free(nm.name);
	free(nm.raw);
	return s;
}

void
tm_manifest_plan_fini(struct tm_manifest_plan *p)
{
	for (size_t i = 0; i < p->n_files; i++)
		free(p->files[i].remap_raw);
	free(p->files);
	free(p->ensure);
	free(p->edges);
	memset(p, 0, sizeof *p);
}

/* ------------------------------------------------------------------ */
/* JSON writer: JSON.stringify(v, null, 2) layout                      */
/* ------------------------------------------------------------------ */

struct jw {
	struct tm_buf *b;
	int depth;
	bool has[MAX_DEPTH + 8]; /* the open scope already has a member */
};

static void
json_str(struct tm_buf *b, const char *s)
{
	tm_buf_addc(b, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': tm_buf_adds(b, "\\\""); break;
		case '\\': tm_buf_adds(b, "\\\\"); break;
		case '\b': tm_buf_adds(b, "\\b"); break;
		case '\f': tm_buf_adds(b, "\\f"); break;
		case '\n': tm_buf_adds(b, "\\n"); break;
		case '\r': tm_buf_adds(b, "\\r"); break;
		case '\t': tm_buf_adds(b, "\\t"); break;
		default:
			if (*p < 0x20)
				tm_buf_addf(b, "\\u%04x", *p);
			else
				tm_buf_addc(b, (char)*p);
		}
	}
	tm_buf_addc(b, '"');
}

static void
w_open(struct jw *w, char c)
{
	tm_buf_addc(w->b, c);
	w->has[++w->depth] = false;
}

static void
w_nl(struct jw *w)
{
	tm_buf_addc(w->b, '\n');
	for (int i = 0; i < w->depth; i++)
		tm_buf_adds(w->b, "  ");
}

static void
w_close(struct jw *w, char c)
{
	bool had = w->has[w->depth--];

	if (had)
		w_nl(w);
	tm_buf_addc(w->b, c);
}

static void
w_item(struct jw *w)
{
	if (w->has[w->depth])
		tm_buf_addc(w->b, ',');
	w->has[w->depth] = true;
	w_nl(w);
}

static void
w_key(struct jw *w, const char *key)
{
	w_item(w);
	json_str(w->b, key);
	tm_buf_adds(w->b, ": ");
}

static void
w_json(struct jw *w, const cJSON *v)
{
	const cJSON *c;

	if (cJSON_IsRaw(v)) {
		tm_buf_adds(w->b, v->valuestring);
	} else if (cJSON_IsString(v)) {
		json_str(w->b, v->valuestring);
	} else if (cJSON_IsTrue(v)) {
		tm_buf_adds(w->b, "true");
	} else if (cJSON_IsFalse(v)) {
		tm_buf_adds(w->b, "false");
	} else if (cJSON_IsObject(v)) {
		w_open(w, '{');
		cJSON_ArrayForEach(c, v) {
			w_key(w, c->string);
			w_json(w, c);
		}
		w_close(w, '}');
	} else if (cJSON_IsArray(v)) {
		w_open(w, '[');
		cJSON_ArrayForEach(c, v) {
			w_item(w);
			w_json(w, c);
		}
		w_close(w, ']');
	} else {
		tm_buf_adds(w->b, "null");
	}
}

static void
w_extras(struct jw *w, const cJSON *x)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, x) {
		w_key(w, c->string);
		w_json(w, c);
	}
}

static void
w_kstr(struct jw *w, const char *key, const char *val)
{
	w_key(w, key);
	json_str(w->b, val);
}

static void
w_clocks(struct jw *w, const struct tm_manifest_clocks *c)
{
	w_open(w, '{');
	w_key(w, "sync_to");
	w_open(w, '{');
	if (c->sync_file)
		w_kstr(w, "file", c->sync_file);
	if (c->sync_machine)
		w_kstr(w, "machine", c->sync_machine);
	if (c->sync_clock)
		w_kstr(w, "clock", tm_clock_name(c->sync_clock));
	w_extras(w, c->sync_extra);
	w_close(w, '}');
	w_key(w, "offset_ns");
	tm_buf_addf(w->b, "%" PRId64, c->offset_ns);
	if (c->clock)
		w_kstr(w, "clock", tm_clock_name(c->clock));
	if (c->machine)
		w_kstr(w, "machine", c->machine);
	w_extras(w, c->extra);
	w_close(w, '}');
}

static void
w_file(struct jw *w, const struct tm_manifest_file *f)
{
	w_open(w, '{');
	w_kstr(w, "path", f->path ? f->path : "");
	if (f->machine_name) {
		w_key(w, "machine");
		w_open(w, '{');
		w_kstr(w, "name", f->machine_name);
		w_extras(w, f->machine_extra);
		w_close(w, '}');
	} else if (f->has_machines) {
		w_key(w, "machines");
		w_open(w, '[');
		for (size_t i = 0; i < f->n_machines; i++) {
			w_item(w);
			w_open(w, '{');
			w_key(w, "id");
			tm_buf_addf(w->b, "%" PRIu32, f->machines[i].id);
			w_kstr(w, "name", f->machines[i].name ? f->machines[i].name : "");
			w_close(w, '}');
		}
		w_close(w, ']');
	}
	if (f->has_clocks) {
		w_key(w, "clocks");
		w_clocks(w, &f->clocks);
	}
	w_extras(w, f->extra);
	w_close(w, '}');
}

void
tm_manifest_emit(const struct tm_manifest *m, struct tm_buf *out)
{
	struct jw *w = xcalloc(1, sizeof *w);

	w->b = out;
	w_open(w, '{');
	w_key(w, "perfetto_manifest");
	w_open(w, '{');
	w_key(w, "version");
	tm_buf_addf(out, "%" PRId64, m->version);
	if (m->has_trace_time) {
		w_key(w, "trace_time");
		w_open(w, '{');
		w_kstr(w, "clock", tm_clock_name(m->tt_clock));
		if (m->tt_file)
			w_kstr(w, "file", m->tt_file);
		if (m->tt_machine)
			w_kstr(w, "machine", m->tt_machine);
		w_extras(w, m->tt_extra);
		w_close(w, '}');
	}
	if (m->has_files) {
		w_key(w, "files");
		w_open(w, '[');
		for (size_t i = 0; i < m->n_files; i++) {
			w_item(w);
			w_file(w, &m->files[i]);
		}
		w_close(w, ']');
	}
	if (m->has_attributes) {
		w_key(w, "attributes");
		w_open(w, '{');
		for (size_t i = 0; i < m->n_attrs; i++) {
			w_key(w, m->attrs[i].key);
			if (m->attrs[i].is_int)
				tm_buf_addf(out, "%" PRId64, m->attrs[i].ival);
			else
				json_str(out, m->attrs[i].sval ? m->attrs[i].sval : "");
		}
		w_close(w, '}');
	}
	w_extras(w, m->extra);
	w_close(w, '}');
	w_extras(w, m->root_extra);
	w_close(w, '}');
	tm_buf_addc(out, '\n');
	free(w);
}

/* ------------------------------------------------------------------ */
/* Outdated syntax: hints with the valid form                          */
/* ------------------------------------------------------------------ */

/* The files[] entry (other than self) that declares machine name. */
static const cJSON *
entry_declaring(const cJSON *files, const cJSON *self, const char *name, bool *via_machines)
{
	const cJSON *e, *c;

	cJSON_ArrayForEach(e, files) {
		const cJSON *mm;

		if (e == self || !is_str(member(e, "path")))
			continue;
		mm = member(member(e, "machine"), "name");
		if (is_str(mm) && strcmp(mm->valuestring, name) == 0) {
			*via_machines = false;
			return e;
		}
		mm = member(e, "machines");
		cJSON_ArrayForEach(c, mm) {
			const cJSON *n = member(c, "name");

			if (is_str(n) && strcmp(n->valuestring, name) == 0) {
				*via_machines = true;
				return e;
			}
		}
	}
	return NULL;
}

static bool
old_clocks(const cJSON *c)
{
	const cJSON *k;

	if (!cJSON_IsObject(c) || member(c, "sync_to"))
		return false;
	cJSON_ArrayForEach(k, c)
		if (cJSON_IsObject(k) &&
		    (member(k, "trace_time_offset_ns") || tm_clock_from_name(k->string)))
			return true;
	return false;
}

static void
hint_clocks(const cJSON *meta, const cJSON *entry, struct tm_buf *h)
{
	const cJSON *c = member(entry, "clocks"), *files = member(meta, "files");
	const cJSON *tt = member(meta, "trace_time"), *first = NULL, *k, *off;
	const char *src = NULL, *ref = NULL, *rclock, *why;
	const cJSON *e;
	bool via = false;
	size_t n_clocks = 0;

	cJSON_ArrayForEach(k, c) {
		if (!cJSON_IsObject(k))
			continue;
		n_clocks++;
		if (!first)
			first = k;
	}
	src = first->string;
	off = member(first, "trace_time_offset_ns");
	if (is_str(member(tt, "file"))) {
		ref = member(tt, "file")->valuestring;
		why = "the trace_time.file, which owns trace time";
	} else if (is_str(member(tt, "machine")) &&
		   (e = entry_declaring(files, entry, member(tt, "machine")->valuestring, &via))) {
		ref = member(e, "path")->valuestring;
		why = "the file of trace_time.machine, which owns trace time";
	} else {
		why = "the first other file in files[] (trace time's owner could not be inferred; "
		      "use the file whose clock the offset was measured against)";
		cJSON_ArrayForEach(e, files) {
			if (e != entry && is_str(member(e, "path"))) {
				ref = member(e, "path")->valuestring;
				break;
			}
		}
		if (!ref) {
			ref = "OTHER_FILE";
			why = "a placeholder: replace OTHER_FILE with the path of the file to align "
			      "to (it must also be listed in files[])";
		}
	}
	rclock = is_str(member(tt, "clock")) && tm_clock_from_name(member(tt, "clock")->valuestring)
			 ? member(tt, "clock")->valuestring
			 : src;
	tm_buf_adds(h, "files entry ");
	json_str(h, is_str(member(entry, "path")) ? member(entry, "path")->valuestring : "");
	tm_buf_adds(h, " uses the outdated `clocks` map of clock names with trace_time_offset_ns "
		       "(older docs). A clocks block is now one relation to a clock in another "
		       "file: \"clocks\": {\"clock\": ");
	json_str(h, src);
	tm_buf_adds(h, ", \"sync_to\": {\"file\": ");
	json_str(h, ref);
	tm_buf_adds(h, ", \"clock\": ");
	json_str(h, rclock);
	tm_buf_addf(h, "}, \"offset_ns\": %s}. ", is_num(off) ? off->valuestring : "0");
	tm_buf_adds(h, "The sign is unchanged: trace_time_offset_ns was added to this file's "
		       "timestamps, and offset_ns means reference = this file + offset_ns (a "
		       "positive value moves the file later). sync_to.file is ");
	tm_buf_adds(h, why);
	tm_buf_adds(h, ".");
	if (n_clocks > 1)
		tm_buf_adds(h, " Only one clock per file can be related; the first was converted.");
}

static void
hint_machines(const cJSON *entry, struct tm_buf *h)
{
	const cJSON *mm = member(entry, "machines"), *k;
	bool first = true;

	tm_buf_adds(h, "files entry ");
	json_str(h, is_str(member(entry, "path")) ? member(entry, "path")->valuestring : "");
	tm_buf_adds(h, " uses the outdated `machines` map keyed by machine id (older docs); it is "
		       "now an array of {id, name}: \"machines\": [");
	cJSON_ArrayForEach(k, mm) {
		const cJSON *n = member(k, "name");
		const char *d = k->string;
		bool numeric = *d != 0;

		for (const char *q = d; *q; q++)
			if (!is_digit(*q))
				numeric = false;
		if (!first)
			tm_buf_adds(h, ", ");
		first = false;
		tm_buf_adds(h, "{\"id\": ");
		if (numeric)
			tm_buf_adds(h, d);
		else
			json_str(h, d);
		tm_buf_adds(h, ", \"name\": ");
		json_str(h, is_str(n) ? n->valuestring : "NAME");
		tm_buf_adds(h, "}");
	}
	tm_buf_adds(h, "].");
}

static void
hint_trace_time(const cJSON *meta, struct tm_buf *h)
{
	const cJSON *tt = member(meta, "trace_time"), *e;
	const char *mach = member(tt, "machine")->valuestring;
	bool via = false;

	e = entry_declaring(member(meta, "files"), NULL, mach, &via);
	tm_buf_adds(h, "trace_time.machine without trace_time.file is the outdated form (older "
		       "docs); a machine is named through the file that declares it: "
		       "\"trace_time\": {\"clock\": ");
	json_str(h, is_str(member(tt, "clock")) ? member(tt, "clock")->valuestring : "BOOTTIME");
	tm_buf_adds(h, ", \"file\": ");
	json_str(h, e ? member(e, "path")->valuestring : "FILE");
	if (via) {
		tm_buf_adds(h, ", \"machine\": ");
		json_str(h, mach);
	}
	tm_buf_adds(h, "}.");
	if (!e) {
		tm_buf_adds(h, " No files entry declares machine ");
		json_str(h, mach);
		tm_buf_adds(h, "; replace FILE with the path of the file whose clock is the "
			       "timeline.");
	}
}

static void
old_syntax_hint(const cJSON *meta, struct tm_error *err)
{
	struct tm_buf h[3];
	const cJSON *e, *tt = member(meta, "trace_time");
	int primary;
	struct tm_buf out;

	for (int i = 0; i < 3; i++)
		tm_buf_init(&h[i]);
	cJSON_ArrayForEach(e, member(meta, "files")) {
		if (old_clocks(member(e, "clocks")) && !h[0].len)
			hint_clocks(meta, e, &h[0]);
		if (cJSON_IsObject(member(e, "machines")) && !h[1].len)
			hint_machines(e, &h[1]);
	}
	if (cJSON_IsObject(tt) && is_str(member(tt, "machine")) && !member(tt, "file"))
		hint_trace_time(meta, &h[2]);
	if (strstr(err->msg, "machines must be an array"))
		primary = 1;
	else if (strstr(err->msg, "trace_time: machine"))
		primary = 2;
	else
		primary = 0;
	tm_buf_init(&out);
	if (h[primary].len)
		tm_buf_adds(&out, h[primary].data);
	for (int i = 0; i < 3; i++) {
		if (i == primary || !h[i].len)
			continue;
		tm_buf_adds(&out, out.len ? " Also: " : "");
		tm_buf_adds(&out, h[i].data);
	}
	if (out.len)
		tm_error_hint(err, "%s", out.data);
	tm_buf_fini(&out);
	for (int i = 0; i < 3; i++)
		tm_buf_fini(&h[i]);
}

/* ------------------------------------------------------------------ */
/* Editing helpers                                                     */
/* ------------------------------------------------------------------ */

struct tm_manifest_file *
tm_manifest_file_get(struct tm_manifest *m, const char *path, bool create)
{
	struct tm_manifest_file *f;

	for (size_t i = 0; i < m->n_files; i++)
		if (str_eq(m->files[i].path, path))
			return &m->files[i];
	if (!create)
		return NULL;
	m->files = xrealloc(m->files, (m->n_files + 1) * sizeof *m->files);
	f = &m->files[m->n_files++];
	memset(f, 0, sizeof *f);
	f->path = xstrdup(path);
	m->has_files = true;
	return f;
}

void
tm_manifest_set_machine(struct tm_manifest *m, const char *path, const char *name)
{
	struct tm_manifest_file *f = tm_manifest_file_get(m, path, name && *name);

	if (!f)
		return;
	free(f->machine_name);
	f->machine_name = NULL;
	if (!name || !*name) {
		cJSON_Delete(f->machine_extra);
		f->machine_extra = NULL;
		return;
	}
	f->machine_name = xstrdup(name);
	machines_clear(f); /* machine and machines are mutually exclusive */
}

void
tm_manifest_set_clocks(struct tm_manifest *m, const char *path, uint32_t clock,
		       const char *ref_file, uint32_t ref_clock, const char *ref_machine,
		       int64_t offset_ns)
{
	/* trace_processor resolves sync_to.file against files[], so the
	 * reference gets an entry of its own (the dialog lists every file once
	 * any has config).  First, as appending moves the array. */
	if (ref_file && *ref_file)
		(void)tm_manifest_file_get(m, ref_file, true);
	struct tm_manifest_file *f = tm_manifest_file_get(m, path, true);
	struct tm_manifest_clocks *c = &f->clocks;

	if (!f->has_clocks)
		memset(c, 0, sizeof *c);
	f->has_clocks = true;
	c->clock = clock;
	free(c->sync_file);
	c->sync_file = xstrdup(ref_file ? ref_file : "");
	free(c->sync_machine);
	c->sync_machine = xstrdup0(ref_machine && *ref_machine ? ref_machine : NULL);
	c->sync_clock = ref_clock;
	c->offset_ns = offset_ns;
}

void
tm_manifest_clear_clocks(struct tm_manifest *m, const char *path)
{
	struct tm_manifest_file *f = tm_manifest_file_get(m, path, false);

	if (!f || !f->has_clocks)
		return;
	clocks_fini(&f->clocks);
	f->has_clocks = false;
}

void
tm_manifest_set_trace_time(struct tm_manifest *m, uint32_t clock, const char *file,
			   const char *machine)
{
	free(m->tt_file);
	free(m->tt_machine);
	m->tt_file = m->tt_machine = NULL;
	if (clock == TM_CLOCK_UNSET) {
		cJSON_Delete(m->tt_extra);
		m->tt_extra = NULL;
		m->has_trace_time = false;
		m->tt_clock = 0;
		return;
	}
	m->has_trace_time = true;
	m->tt_clock = clock;
	if (file && *file) /* trace_time.file must name a files[] entry too */
		(void)tm_manifest_file_get(m, file, true);
	m->tt_file = xstrdup0(file && *file ? file : NULL);
	m->tt_machine = xstrdup0(machine && *machine ? machine : NULL);
}

static struct tm_manifest_attr *
attr_slot(struct tm_manifest *m, const char *key)
{
	struct tm_manifest_attr *a;

	for (size_t i = 0; i < m->n_attrs; i++)
		if (strcmp(m->attrs[i].key, key) == 0)
			return &m->attrs[i];
	m->attrs = xrealloc(m->attrs, (m->n_attrs + 1) * sizeof *m->attrs);
	a = &m->attrs[m->n_attrs++];
	memset(a, 0, sizeof *a);
	a->key = xstrdup(key);
	m->has_attributes = true;
	return a;
}

void
tm_manifest_set_attr_str(struct tm_manifest *m, const char *key, const char *val)
{
	struct tm_manifest_attr *a = attr_slot(m, key);

	free(a->sval);
	a->is_int = false;
	a->ival = 0;
	a->sval = xstrdup(val ? val : "");
}

void
tm_manifest_set_attr_int(struct tm_manifest *m, const char *key, int64_t val)
{
	struct tm_manifest_attr *a = attr_slot(m, key);

	free(a->sval);
	a->sval = NULL;
	a->is_int = true;
	a->ival = val;
}

void
tm_manifest_remove_attr(struct tm_manifest *m, const char *key)
{
	for (size_t i = 0; i < m->n_attrs; i++) {
		if (strcmp(m->attrs[i].key, key) != 0)
			continue;
		attr_fini(&m->attrs[i]);
		memmove(&m->attrs[i], &m->attrs[i + 1], (m->n_attrs - i - 1) * sizeof *m->attrs);
		m->n_attrs--;
		break;
	}
	if (m->n_attrs == 0) {
		free(m->attrs);
		m->attrs = NULL;
		m->has_attributes = false;
	}
}

/* ------------------------------------------------------------------ */
/* Durations                                                           */
/* ------------------------------------------------------------------ */

static const struct {
	const char *unit;
	int exp10;
} units[] = {
	{"ns", 0}, {"us", 3}, {"\xc2\xb5s", 3}, {"\xce\xbcs", 3}, {"ms", 6}, {"s", 9},
};

enum tm_status
tm_parse_duration_ns(const char *s, int64_t *out, struct tm_error *err)
{
	const char *p = s, *ip, *fp = NULL, *u;
	size_t n_int, n_frac = 0, ulen;
	bool neg = false;
	int e10 = -1;
	uint64_t v = 0;

	if (!s)
		return tm_error_set(err, TM_ERR_INVALID, "invalid duration: empty");
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	ip = p;
	while (is_digit(*p))
		p++;
	n_int = (size_t)(p - ip);
	if (*p == '.') {
		fp = ++p;
		while (is_digit(*p))
			p++;
		n_frac = (size_t)(p - fp);
	}
	if (n_int + n_frac == 0)
		return tm_error_set(err, TM_ERR_INVALID,
				    "invalid duration '%s': expected a number with an optional unit "
				    "(ns, us, ms, s), e.g. 250ms or -1.5s",
				    s);
	while (*p == ' ' || *p == '\t')
		p++;
	u = p;
	ulen = strlen(u);
	while (ulen && (u[ulen - 1] == ' ' || u[ulen - 1] == '\t'))
		ulen--;
	if (ulen == 0)
		e10 = 0;
	for (size_t i = 0; e10 < 0 && i < sizeof units / sizeof units[0]; i++)
		if (strlen(units[i].unit) == ulen && memcmp(units[i].unit, u, ulen) == 0)
			e10 = units[i].exp10;
	if (e10 < 0)
		return tm_error_set(err, TM_ERR_INVALID,
				    "invalid duration '%s': unknown unit '%.*s' (use ns, us, ms or s)",
				    s, (int)ulen, u);
	/* value = int.frac * 10^e10, in exact integer arithmetic */
	for (size_t i = 0; i < n_int + (size_t)e10; i++) {
		int d;

		if (i < n_int)
			d = ip[i] - '0';
		else if (i - n_int < n_frac)
			d = fp[i - n_int] - '0';
		else
			d = 0;
		if (v > (UINT64_MAX - (uint64_t)d) / 10)
			return tm_error_set(err, TM_ERR_INVALID,
					    "invalid duration '%s': out of range (at most "
					    "9223372036854775807 ns, about 292 years)",
					    s);
		v = v * 10 + (uint64_t)d;
	}
	for (size_t i = (size_t)e10; i < n_frac; i++)
		if (fp[i] != '0')
			return tm_error_set(err, TM_ERR_INVALID,
					    "invalid duration '%s': fractional nanoseconds are not "
					    "allowed (offsets are whole ns)",
					    s);
	if (v > (uint64_t)INT64_MAX)
		return tm_error_set(err, TM_ERR_INVALID,
				    "invalid duration '%s': out of range (%s9223372036854775807 ns "
				    "is the limit%s)",
				    s, neg ? "-" : "", neg ? "; -2^63 is rejected by trace_processor" : "");
	*out = neg ? -(int64_t)v : (int64_t)v;
	return TM_OK;
}

void
tm_format_duration_ns(int64_t ns, struct tm_buf *out)
{
	static const struct {
		const char *name;
		uint64_t scale;
		int digits;
	} fmt[] = {{"s", 1000000000u, 9}, {"ms", 1000000u, 6}, {"us", 1000u, 3}, {"ns", 1u, 0}};
	uint64_t mag;
	size_t i;

	if (ns == 0) {
		tm_buf_adds(out, "0 ns");
		return;
	}
	mag = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	for (i = 0; i < 3 && mag < fmt[i].scale; i++)
		;
	tm_buf_addf(out, "%c%" PRIu64, ns < 0 ? '-' : '+', mag / fmt[i].scale);
	if (fmt[i].digits) {
		char frac[16];
		int n = fmt[i].digits;

		snprintf(frac, sizeof frac, "%0*" PRIu64, n, mag % fmt[i].scale);
		while (n > 0 && frac[n - 1] == '0')
			n--;
		if (n)
			tm_buf_addf(out, ".%.*s", n, frac);
	}
	tm_buf_addf(out, " %s", fmt[i].name);
}
