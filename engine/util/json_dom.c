/* SPDX-License-Identifier: MIT */
/*
 * trace_processor's JSON reader: json::Parse as trace_processor runs it on a
 * perfetto_manifest, building a cJSON tree, and the json::Dom accessors the
 * validation uses (and the gecko scanner's reader).
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
 * A string with an escaped NUL ("\u0000") keeps it and what follows (its
 * length in the node's valuedouble, tm_mj_str_len), as the std::string
 * does; only files[].path reads it so far (a GNU tar long name ends in a
 * NUL).  What is NOT matched: a key with an escaped NUL is cut at the NUL
 * here (the DOM is a std::map keyed by std::string); and nesting deeper than 1000 levels fails here with our own
 * message (trace_processor recurses without a limit).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_lex.h"
#include "json_dom.h"
#include "strmap.h"

/* ------------------------------------------------------------------ */
/* JSON parser with trace_processor's grammar                          */
/* ------------------------------------------------------------------ */

enum rc { RC_OK, RC_ERR, RC_INCOMPLETE, RC_END };
enum scope { SC_NONE, SC_OBJ, SC_ARR };

struct jp {
	struct tm_jl lx;   /* lx.msg is the sticky status (Iterator::status_) */
	struct tm_buf status;
	const char *cur;
	char *key;         /* last key parsed anywhere (Iterator::key_) */
	size_t key_len;
	struct tm_buf msg; /* the final error */
	int depth;
	const char *expect; /* what the input lacked when it ended (ours) */
	bool incomplete;
};

/* Bytes of input quoted in an error text. */
#define QUOTE_MAX 400

static enum rc
rc_of(enum tm_jl_rc r)
{
	return r == TM_JL_OK ? RC_OK : r == TM_JL_ERR ? RC_ERR : RC_INCOMPLETE;
}

/* OnPostValue: after a value in scope sc. */
static enum rc
post_value(struct jp *p, const char **cur, enum scope sc)
{
	bool obj = sc == SC_OBJ;

	const char *e = p->lx.end;
	enum rc r;

	r = rc_of(tm_jl_after_value(&p->lx, cur, obj ? '}' : ']', p->key, obj ? p->key_len : 0));
	if (r == RC_INCOMPLETE) {
		/* ended after the ',' or before it? */
		while (e != *cur && tm_jl_is_ws(e[-1]))
			e--;
		if (e != *cur && e[-1] == ',')
			p->expect = obj ? "a member name, its ':' and a value" : "a value";
		else
			p->expect = obj ? "',' or '}' after a member" : "',' or ']' after an element";
	}
	return r;
}

static cJSON *
scalar_node(const struct tm_jl_value *v)
{
	cJSON *node;
	char *tok;

	switch (v->t) {
	case TM_JL_STR: {
		tok = xstrndup(v->s, v->n);
		node = cJSON_CreateString(tok);
		if (node && memchr(tok, 0, v->n)) {
			/* json::Parse's std::string keeps an escaped NUL and
			 * what follows: the whole string, its length beside */
			char *whole = cJSON_malloc(v->n + 1);
			if (!whole)
				tm_oom(v->n + 1);
			memcpy(whole, tok, v->n + 1);
			cJSON_free(node->valuestring);
			node->valuestring = whole;
			node->valuedouble = (double)v->n;
		}
		free(tok);
		break;
	}
	case TM_JL_INT:
	case TM_JL_DBL:
		/* the exact token: emitted byte for byte, classified on use */
		tok = xstrndup(v->s, v->n);
		node = cJSON_CreateRaw(tok);
		free(tok);
		break;
	case TM_JL_BOOL: node = cJSON_CreateBool(v->i != 0); break;
	default: node = cJSON_CreateNull(); break;
	}
	if (!node)
		abort();
	return node;
}

/* ParseAndRecurse in scope sc (whose parent is parent).  On RC_OK either
 * *node is a primitive, or *open is '{'/'[' (a container was entered). */
static enum rc
step(struct jp *p, enum scope sc, enum scope parent, struct tm_buf *key, cJSON **node, char *open)
{
	const char *cur = p->cur, *end = p->lx.end;
	struct tm_jl_value v;
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
		const char *k;
		size_t kn;

		p->expect = "a member name, its ':' and a value";
		r = rc_of(tm_jl_key(&p->lx, &cur, &k, &kn, key));
		if (r != RC_OK)
			return r;
		free(p->key);
		p->key = xstrndup(k, kn);
		p->key_len = kn;
	} else {
		cur = tm_jl_skip_ws(cur, end);
		p->expect = "a value";
		if (cur == end)
			return RC_INCOMPLETE;
	}
	if (*cur == '{' || *cur == '[') {
		*open = *cur++;
		cur = tm_jl_skip_ws(cur, end);
		p->expect = *open == '{' ? "a member or '}'" : "a value or ']'";
		if (cur == end)
			return RC_INCOMPLETE;
		p->cur = cur;
		return RC_OK;
	}
	p->expect = *cur == '"' ? "the '\"' that closes a string" : "the rest of a value";
	tm_buf_init(&sb);
	r = rc_of(tm_jl_value(&p->lx, &cur, &v, &sb));
	if (r == RC_OK)
		*node = scalar_node(&v);
	tm_buf_fini(&sb);
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

/* Members of an object are found by a linear walk while few, then through
 * an index (so 40,000 attributes parse in linear time). */
#define OBJ_INDEX_AFTER 8

static void
obj_put(cJSON *obj, char *key, cJSON *child, struct tm_strmap *index, size_t *n)
{
	struct tm_strmap_slot *slot = NULL;
	cJSON *old, *c;

	if (*n >= OBJ_INDEX_AFTER && !index->cap) {
		cJSON_ArrayForEach(c, obj)
			tm_strmap_put(index, c->string, strlen(c->string), (size_t)(uintptr_t)c, NULL);
	}
	if (index->cap) {
		slot = tm_strmap_get(index, key, strlen(key));
		old = slot ? (cJSON *)(uintptr_t)slot->val : NULL;
	} else {
		old = cJSON_GetObjectItemCaseSensitive(obj, key);
	}
	if (!old) {
		cJSON_AddItemToObject(obj, key, child);
		(*n)++;
		if (index->cap)
			tm_strmap_put(index, child->string, strlen(child->string),
				      (size_t)(uintptr_t)child, NULL);
		return;
	}
	/* a repeated key: the last value wins, at the first one's position
	 * (cJSON's default hooks are malloc/free, so the key is ours to give) */
	child->string = xstrdup(key);
	cJSON_ReplaceItemViaPointer(obj, old, child);
	if (slot) {
		slot->key = child->string;
		slot->val = (size_t)(uintptr_t)child;
	}
}

/* The loop of ParseRecursive (and Parse's root loop) for one container. */
static enum rc
parse_scope(struct jp *p, enum scope sc, enum scope parent, cJSON *node)
{
	struct tm_strmap index = {0};
	struct tm_buf key;
	enum rc r = RC_OK;
	size_t n = 0;

	if (++p->depth > MAX_DEPTH) {
		tm_buf_reset(&p->msg);
		tm_buf_addf(&p->msg, "JSON nested deeper than %d levels (tracemerge limit)",
			    MAX_DEPTH);
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
			p->incomplete = r == RC_INCOMPLETE;
			tm_buf_reset(&p->msg);
			tm_buf_addf(&p->msg, "Failed to parse %s: %s",
				    sc == SC_OBJ ? "object" : "array",
				    p->status.data ? p->status.data : "");
			r = RC_ERR;
			break;
		}
		k = sc == SC_OBJ ? xstrdup(p->key) : NULL;
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
			obj_put(node, k, child, &index, &n);
		else
			cJSON_AddItemToArray(node, child);
		free(k);
	}
	tm_buf_fini(&key);
	tm_strmap_fini(&index);
	p->depth--;
	return r;
}

/* json::Parse.  Returns the root or NULL with msg set. */
cJSON *
tm_mj_parse(const char *text, size_t len, char *msg, size_t msg_size, struct tm_mj_stop *stop)
{
	struct jp p;
	const char *cur, *end = text + len;
	cJSON *root = NULL;
	bool is_obj;

	memset(&p, 0, sizeof p);
	memset(stop, 0, sizeof *stop);
	if (len == 0) {
		snprintf(msg, msg_size, "Empty JSON input");
		return NULL;
	}
	cur = tm_jl_skip_ws(text, end);
	if (cur == end) {
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
	cur = tm_jl_skip_ws(cur + 1, end);
	if (cur == end) {
		snprintf(msg, msg_size, "Failed to start parsing: ");
		stop->incomplete = true;
		stop->offset = len;
		stop->expected = is_obj ? "a member or '}'" : "a value or ']'";
		return NULL;
	}
	tm_buf_init(&p.status);
	tm_buf_init(&p.msg);
	p.lx.end = end;
	p.lx.msg = &p.status;
	p.lx.sticky = &p.status; /* one status_, as the Iterator has */
	p.lx.quote_max = QUOTE_MAX;
	p.cur = cur;
	root = is_obj ? cJSON_CreateObject() : cJSON_CreateArray();
	if (!root)
		abort();
	if (parse_scope(&p, is_obj ? SC_OBJ : SC_ARR, SC_NONE, root) != RC_OK) {
		snprintf(msg, msg_size, "%s", p.msg.data ? p.msg.data : "");
		stop->incomplete = p.incomplete;
		stop->offset = len;
		stop->expected = p.expect;
		cJSON_Delete(root);
		root = NULL;
	}
	tm_buf_fini(&p.status);
	tm_buf_fini(&p.msg);
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

size_t
tm_mj_str_len(const cJSON *v)
{
	return v->valuedouble > 0 ? (size_t)v->valuedouble : strlen(v->valuestring);
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
	if (strpbrk(t, ".eE"))
		return false;
	return tm_jl_to_int64(t, t + strlen(t), out ? out : &dummy);
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
	if (!tm_jl_to_double(t, t + strlen(t), &d))
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
