/* SPDX-License-Identifier: MIT */
/*
 * The manifest's JSON reader: json::Parse as trace_processor runs it on a
 * perfetto_manifest, building a cJSON tree, and the json::Dom accessors the
 * validation uses.
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
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manifest_priv.h"

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
cJSON *
tm_mj_parse(const char *text, size_t len, char *msg, size_t msg_size)
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

const cJSON *
tm_mj_member(const cJSON *o, const char *key)
{
	if (!cJSON_IsObject(o))
		return NULL;
	return cJSON_GetObjectItemCaseSensitive(o, key);
}

bool
tm_mj_is_str(const cJSON *v)
{
	return v && cJSON_IsString(v);
}

bool
tm_mj_is_num(const cJSON *v)
{
	return v && cJSON_IsRaw(v);
}

/* IsIntegral: an int64 in the DOM. */
bool
tm_mj_is_int(const cJSON *v, int64_t *out)
{
	const char *t;
	int64_t dummy;

	if (!tm_mj_is_num(v))
		return false;
	t = v->valuestring;
	if (!tok_is_int_like(t))
		return false;
	return tok_to_int64(t, t + strlen(t), out ? out : &dummy);
}

/* AsInt64 of a number: a double is cast as x86 does (out of range or NaN
 * gives INT64_MIN, the "integer indefinite" value). */
int64_t
tm_mj_as_int64(const cJSON *v)
{
	int64_t i;
	double d = 0;
	const char *t;

	if (tm_mj_is_int(v, &i))
		return i;
	if (!tm_mj_is_num(v))
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
cJSON *
tm_mj_extras(const cJSON *o, const char *const *known)
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
