/* SPDX-License-Identifier: MIT */
/*
 * The engine's JSON lexer, trace_processor's grammar and error texts
 * (src/trace_processor/util/json_parser.h); see json_lex.h.  The inline
 * lexer is in the header; its cold parts (error texts, unescaping) are here.
 */
#include <stdio.h>
#include <string.h>

#include "json_lex.h"

void
tm_jl_error(struct tm_jl *lx, const char *fmt, ...)
{
	struct tm_buf b;
	va_list ap;

	/* formatted first: an argument may point into lx->msg */
	tm_buf_init(&b);
	va_start(ap, fmt);
	tm_buf_vaddf(&b, fmt, ap);
	va_end(ap);
	tm_buf_fini(lx->msg);
	*lx->msg = b;
}

enum tm_jl_rc
tm_jl_unescape(struct tm_jl *lx, const char *s, size_t n, struct tm_buf *out)
{
	const char *e = s + n;

	tm_buf_reset(out);
	for (const char *it = s; it < e; it++) {
		if (*it != '\\') {
			const char *q = memchr(it, '\\', (size_t)(e - it));

			if (!q)
				q = e;
			tm_buf_add(out, it, (size_t)(q - it));
			it = q - 1;
			continue;
		}
		++it;
		if (it >= e)
			break;
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

			for (int j = 0; j < 4; j++) {
				/* four characters are read; the first one that is not
				 * hex (at worst the closing quote, e[0]) ends it */
				char h = it < e ? *++it : '"';

				cp <<= 4;
				if (h >= '0' && h <= '9') {
					cp += (uint32_t)(h - '0');
				} else if (h >= 'a' && h <= 'f') {
					cp += (uint32_t)(h - 'a' + 10);
				} else if (h >= 'A' && h <= 'F') {
					cp += (uint32_t)(h - 'A' + 10);
				} else {
					tm_jl_error(lx, "Invalid escape sequence: \\u%c%c%c%c", it[-3],
						    it[-2], it[-1], h);
					return TM_JL_ERR;
				}
			}
			if (cp <= 0x7f) {
				tm_buf_addc(out, (char)cp);
			} else if (cp <= 0x7ff) {
				tm_buf_addc(out, (char)(0xc0 | (cp >> 6)));
				tm_buf_addc(out, (char)(0x80 | (cp & 0x3f)));
			} else if (cp >= 0xd800 && cp <= 0xdfff) {
				tm_jl_error(lx,
					    "Invalid escape sequence: \\u%c%c%c%c (code point %u is "
					    "reserved for surrogate pairs)",
					    it[-3], it[-2], it[-1], *it, cp);
				return TM_JL_ERR;
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
	return TM_JL_OK;
}

