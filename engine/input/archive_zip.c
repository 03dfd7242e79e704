/* SPDX-License-Identifier: MIT */
/*
 * ZIP (input_priv.h): local headers in physical order as
 * util/zip_reader.cc reads them, each entry inflated and checked in turn.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "zinflate.h"
#include "input_priv.h"

/* ---- ZIP ---- */

static uint16_t
le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t
le32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
	       ((uint32_t)p[3] << 24);
}

static uint64_t
le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | ((uint64_t)le32(p + 4) << 32);
}

struct zent {
	size_t mi;
	char *err;    /* trace_processor's decompression-time error */
	bool handed;  /* given to the visitor while listing (zip_visit) */
};

/* Copy of what the sniffer gets, capped. */
static void
capture(uint8_t *dst, size_t *dn, const uint8_t *p, size_t n)
{
	if (*dn >= SNIFF_CAP)
		return;
	size_t k = SNIFF_CAP - *dn < n ? SNIFF_CAP - *dn : n;
	memcpy(dst + *dn, p, k);
	*dn += k;
}

/* Inflate raw deflate from rd.  bounded: at most csize input bytes.
 * *consumed = input bytes used up to the end of the deflate stream.
 * Returns 0 ok (stream end), 1 input ended first, 2 data error. */
static int
zip_inflate(struct tm_rd *rd, bool bounded, uint64_t csize, uint64_t *consumed,
	    uint64_t *out_n, uint32_t *crc, uint8_t *sn, size_t *snn, struct tm_work *w,
	    const char *lab, struct tm_error *err, enum tm_status *s)
{
	z_stream z;
	uint8_t out[65536];
	int res = 1;
	tm_inflate_init(&z, -15);
	*consumed = 0;
	*out_n = 0;
	*crc = 0;
	*s = TM_OK;
	for (;;) {
		if ((*s = tm_rd_fill(rd, err)) != TM_OK)
			break;
		size_t avail = rd->n;
		if (bounded && avail > csize - *consumed)
			avail = (size_t)(csize - *consumed);
		if (!avail)
			break;
		z.next_in = (Bytef *)(uintptr_t)rd->p;
		z.avail_in = (uInt)(avail > UINT32_MAX ? UINT32_MAX : avail);
		uInt given = z.avail_in;
		int r = Z_OK;
		while (z.avail_in && r == Z_OK) {
			z.next_out = out;
			z.avail_out = sizeof out;
			r = inflate(&z, Z_NO_FLUSH);
			size_t prod = sizeof out - z.avail_out;
			*crc = tm_crc32(*crc, out, prod);
			*out_n += prod;
			__atomic_fetch_add(&tm_inflated_bytes, (uint64_t)prod, __ATOMIC_RELAXED);
			capture(sn, snn, out, prod);
			if ((*s = tm_work_charge(w, prod, lab, err)) != TM_OK) {
				inflateEnd(&z);
				return 1;
			}
			if (r == Z_BUF_ERROR && prod == 0)
				break;
			if (r == Z_BUF_ERROR)
				r = Z_OK;
		}
		size_t used = given - z.avail_in;
		rd->p += used;
		rd->n -= used;
		rd->off += used;
		*consumed += used;
		if (r == Z_STREAM_END) {
			/* drain any output still pending */
			res = 0;
			break;
		}
		if (r != Z_OK && r != Z_BUF_ERROR) {
			res = 2;
			break;
		}
	}
	inflateEnd(&z);
	return res;
}

/* An entry ISA-L failed to inflate, inflated again by zlib from its first
 * byte: how much inflated, its CRC-32, its sniff and how it ended are
 * zlib's, as ZipFile::Decompress's (zip_visit). */
static enum tm_status
zip_redo(struct tm_input *in, size_t mi, uint64_t doff, uint64_t csize, uint8_t *sn,
	 size_t *snn, int *zr, uint64_t *outn, uint32_t *crc, struct tm_error *err)
{
	struct tm_stream *win = NULL;
	char *lab = tm_ar_label(in, mi);
	size_t ci = (size_t)in->members[mi].parent;
	int fd = -1;
	/* the container's file, opened again (its own descriptor: the
	 * listing's are the walker's) */
	enum tm_status s = tm_ar_open_path(in, P(in)->locs[ci].path_idx, &fd, err);
	if (s == TM_OK)
		s = tm_stream_window(tm_stream_file_fd(fd, lab, in->members[ci].stored_size), doff,
				     csize, lab, &win, err);
	if (s == TM_OK) {
		struct tm_rd r = {.st = win};
		uint64_t consumed;
		*snn = 0;
		*zr = zip_inflate(&r, true, csize, &consumed, outn, crc, sn, snn, &P(in)->work, lab,
				  err, &s);
		tm_stream_close(win); /* (and the file: the window took it) */
	}
	free(lab);
	return s;
}

/* A deflated ZIP entry of csize bytes at rd, registered early as member mi
 * (its sniff is set here): inflated once, on a thread beside the reader,
 * for the listing (sniff head, CRC-32, size) and for the visitor's scan,
 * which reads it as the listing goes (tm_input_open_visit).  Out: how the
 * deflate data ended (*zr as zip_inflate), the output's size and CRC, and
 * the entry's input bytes taken from rd (*taken; csize unless the
 * container ends first).  *visited: the visitor scanned it; the caller
 * drops that scan if the entry turns out not to be what the scan read. */
static enum tm_status
zip_visit(struct tm_input *in, size_t mi, struct tm_rd *rd, uint64_t csize, uint64_t usize,
	  uint8_t *sn, size_t *snn, int *zr, uint64_t *outn, uint32_t *crc, uint64_t *taken,
	  bool *visited, struct tm_error *err)
{
	const struct tm_visit *v = P(in)->visit;
	struct tm_member *m = &in->members[mi];
	char *lab = tm_ar_label(in, mi);
	uint64_t doff = rd->off;
	struct tm_stream *w = tm_stream_borrow(rd, lab, csize);
	struct tm_stream *z = tm_stream_inflate(w, lab, true, false, m->name, csize);
	/* ISA-L where the entry can be read again (a ZIP file): a failure is
	 * redone with zlib (zip_redo; the decoders stop apart in bad data) */
	if (P(in)->locs[m->parent].kind == L_FILE)
		tm_stream_zip_fast(z);
	bool fast = tm_stream_zip_was_fast(z);
	tm_stream_zip_crc(z);
	struct tm_stream *a = tm_stream_ahead(z, lab);
	struct tm_rd ard = {.st = a};
	struct tm_error e;
	tm_error_clear(&e);
	enum tm_status s = TM_OK;
	*snn = 0;
	while (*snn < SNIFF_CAP) { /* (what was inflated before a failure counts) */
		if ((s = tm_rd_fill(&ard, &e)) != TM_OK || !ard.n)
			break;
		size_t k = SNIFF_CAP - *snn < ard.n ? SNIFF_CAP - *snn : ard.n;
		memcpy(sn + *snn, ard.p, k);
		*snn += k;
		ard.p += k;
		ard.n -= k;
		ard.off += k;
	}
	*visited = false;
	if (s == TM_OK && !m->is_hidden) {
		tm_ar_set_format(m, tm_sniff(sn, *snn));
		tm_ar_publish(in, mi);
		if (tm_format_is_predicted(m->format) && usize > 0) {
			struct tm_stream *vw = tm_stream_borrow_after(&ard, lab, sn, *snn, usize);
			*visited = true;
			if ((s = v->member(v->ud, mi, vw, err)) != TM_OK) {
				tm_stream_close(a);
				free(lab);
				return s;
			}
		}
	}
	uint64_t got;
	if (s == TM_OK)
		s = tm_rd_skip(&ard, UINT64_MAX, &got, &e);
	*outn = ard.off;
	uint64_t used;
	*zr = tm_stream_zip_result(z, crc, &used);
	*taken = tm_stream_offset(w);
	tm_stream_close(a); /* (joins the inflating thread first) */
	free(lab);
	if (*zr < 0 && !(s != TM_OK && e.code == TM_ERR_FORMAT && *taken < csize)) {
		*err = e; /* ours: cancelled, the listing's cap, I/O */
		return s != TM_OK ? s : tm_error_set(err, TM_ERR_INVALID, "%s: inflate", m->name);
	}
	/* the rest of the entry after the deflate data (short: the container
	 * ends inside the entry; the caller sees *taken < csize) */
	if (*zr < 0)
		*zr = 1;
	uint64_t k;
	if ((s = tm_rd_skip(rd, csize - *taken, &k, err)) != TM_OK)
		return s;
	*taken += k;
	if (fast && *zr != 0 && *taken == csize)
		return zip_redo(in, mi, doff, csize, sn, snn, zr, outn, crc, err);
	return TM_OK;
}

enum tm_status
tm_ar_walk_zip(struct tm_input *in, size_t ci, struct tm_error *err)
{
	struct tm_stream *st;
	enum tm_status s = tm_ar_open_member(in, ci, &st, err);
	if (s != TM_OK)
		return s;
	struct tm_rd rd = {.st = st};
	uint8_t *sn = xmalloc(SNIFF_CAP);
	struct zent *ents = NULL;
	size_t n_ents = 0, ecap = 0;
	size_t first_member = in->n_members;
	bool header_error = false;
	char t[1024];
	char *lab = tm_ar_label(in, ci);

	for (uint64_t index = 0;; index++) {
		uint8_t h[30];
		size_t got;
		uint64_t hoff = rd.off;
		if ((s = tm_rd_read(&rd, h, 30, &got, err)) != TM_OK)
			goto out;
		if (got < 30) {
			if (got)
				tm_ar_input_warn(in, ci, hoff, "the archive ends inside a ZIP entry header");
			break; /* truncated: trace_processor drops a partial entry */
		}
		uint32_t sig = le32(h);
		if (sig == 0x02014b50)
			break; /* central directory: the rest is ignored */
		uint64_t at = hoff + 30;
		if (sig != 0x04034b50) {
			snprintf(t, sizeof t,
				 "Invalid signature found at offset 0x%" PRIx64
				 ". Actual=0x%x, expected=0x%x",
				 at, sig, 0x04034b50u);
			tm_ar_set_cfatal(in, ci, t, "byte 0x%" PRIx64 ": not a ZIP local header", hoff);
			header_error = true;
			goto out;
		}
		uint16_t version = le16(h + 4), flags = le16(h + 6), method = le16(h + 8);
		uint32_t crc = le32(h + 14);
		uint64_t csize = le32(h + 18), usize = le32(h + 22);
		uint16_t fnl = le16(h + 26), exl = le16(h + 28);
		uint16_t known = 1u | 2u | 4u | 8u | (1u << 11);
		if (version > 45 || (flags & 1) || (flags & ~known)) {
			snprintf(t, sizeof t,
				 "Unsupported zip features at offset 0x%" PRIx64
				 ". version=%x, flags=%x",
				 at, version, flags);
			tm_ar_set_cfatal(in, ci, t,
				   "byte 0x%" PRIx64 ": entry needs zip version %u.%u or flags %#x "
				   "(encryption, bzip2, LZMA, ...)",
				   hoff, version / 10, version % 10, flags);
			header_error = true;
			goto out;
		}
		if (method != 0 && method != 8) {
			snprintf(t, sizeof t,
				 "Unsupported compression type at offset 0x%" PRIx64
				 ". type=%x. Only deflate and no compression are supported.",
				 at, method);
			tm_ar_set_cfatal(in, ci, t, "byte 0x%" PRIx64 ": compression method %u", hoff,
				   method);
			header_error = true;
			goto out;
		}
		if ((flags & 8) && method != 8) {
			snprintf(t, sizeof t,
				 "Unsupported compression type at offset 0x%" PRIx64
				 ". type=%x. Only deflate supported for ZIPs compressed in a "
				 "streaming fashion.",
				 at, method);
			tm_ar_set_cfatal(in, ci, t,
				   "byte 0x%" PRIx64 ": stored entry with a data descriptor", hoff);
			header_error = true;
			goto out;
		}
		char *name = xmalloc((size_t)fnl + 1);
		if ((s = tm_rd_read(&rd, name, fnl, &got, err)) != TM_OK || got < fnl) {
			if (s == TM_OK)
				tm_ar_input_warn(in, ci, hoff, "the archive ends inside a ZIP entry's name");
			free(name);
			goto out;
		}
		name[fnl] = 0;
		uint8_t ex[65536];
		bool zip64 = false;
		if ((s = tm_rd_read(&rd, ex, exl, &got, err)) != TM_OK || got < exl) {
			if (s == TM_OK)
				tm_ar_input_warn(in, ci, hoff,
					   "the archive ends inside the extra field of ZIP entry '%s'",
					   name);
			free(name);
			goto out;
		}
		for (size_t p = 0; p + 4 <= exl;) {
			uint16_t id = le16(ex + p), sz = le16(ex + p + 2);
			p += 4;
			if (exl - p < sz)
				break;
			if (id == 1) {
				size_t f = p, fe = p + sz;
				zip64 = true;
				if (usize == 0xffffffffu) {
					if (fe - f < 8) {
						snprintf(t, sizeof t,
							 "Malformed ZIP at offset 0x%" PRIx64
							 ". Zip64 extra field is too short to hold the "
							 "uncompressed size.",
							 rd.off);
						tm_ar_set_cfatal(in, ci, t, "byte 0x%" PRIx64 ": zip64 field",
							   rd.off);
						header_error = true;
						free(name);
						goto out;
					}
					usize = le64(ex + f);
					f += 8;
				}
				if (csize == 0xffffffffu) {
					if (fe - f < 8) {
						snprintf(t, sizeof t,
							 "Malformed ZIP at offset 0x%" PRIx64
							 ". Zip64 extra field is too short to hold the "
							 "compressed size.",
							 rd.off);
						tm_ar_set_cfatal(in, ci, t, "byte 0x%" PRIx64 ": zip64 field",
							   rd.off);
						header_error = true;
						free(name);
						goto out;
					}
					csize = le64(ex + f);
				}
			}
			p += sz;
		}
		uint64_t doff = rd.off;
		size_t snn = 0;
		size_t pre = SIZE_MAX; /* registered early (zip_visit) */
		bool handed = false;   /* and given to the visitor */
		uint64_t outn = 0, consumed = 0;
		uint32_t acrc = 0;
		bool hidden = tm_ar_is_hidden(name, fnl);
		int zr = 0;
		if (flags & 8) {
			zr = zip_inflate(&rd, false, 0, &consumed, &outn, &acrc, sn, &snn,
					 &P(in)->work, lab, err, &s);
			if (s != TM_OK) {
				free(name);
				goto out;
			}
			if (zr == 2) {
				snprintf(t, sizeof t,
					 "Failed decompressing stream in ZIP file at offset 0x%" PRIx64,
					 doff);
				tm_ar_set_cfatal(in, ci, t, "byte 0x%" PRIx64 ": bad deflate data in %s",
					   doff, name);
				header_error = true;
				free(name);
				goto out;
			}
			if (zr == 1) {
				tm_ar_input_warn(in, ci, hoff, "the archive ends inside ZIP entry '%s'", name);
				free(name);
				break; /* truncated: the entry is never complete */
			}
			uint8_t dd[24];
			size_t dsz = zip64 ? 24 : 16;
			if ((s = tm_rd_read(&rd, dd, dsz, &got, err)) != TM_OK || got < dsz) {
				if (s == TM_OK)
					tm_ar_input_warn(in, ci, hoff,
						   "the archive ends inside the data descriptor of ZIP "
						   "entry '%s'",
						   name);
				free(name);
				goto out;
			}
			if (le32(dd) != 0x08074b50) {
				snprintf(t, sizeof t,
					 "Invalid signature found at offset 0x%" PRIx64
					 ". Actual=0x%x, expected=0x%x",
					 rd.off, le32(dd), 0x08074b50u);
				tm_ar_set_cfatal(in, ci, t,
					   "byte 0x%" PRIx64 ": data descriptor without signature",
					   rd.off - dsz);
				header_error = true;
				free(name);
				goto out;
			}
			crc = le32(dd + 4);
			csize = zip64 ? le64(dd + 8) : le32(dd + 8);
			usize = zip64 ? le64(dd + 16) : le32(dd + 12);
			if (csize != consumed) {
				tm_ar_set_cfatal(in, ci,
					   "trace_processor aborts (PERFETTO_CHECK failure) on this "
					   "archive",
					   "byte 0x%" PRIx64 ": %s: data descriptor says %" PRIu64
					   " compressed bytes, the deflate stream has %" PRIu64,
					   doff, name, csize, consumed);
				header_error = true;
				free(name);
				goto out;
			}
		} else if (method == 8 && P(in)->visit && !hidden) {
			/* inflated once, for the listing and the scan together */
			if (tm_ar_too_many(in, err, &s)) {
				free(name);
				goto out;
			}
			pre = tm_ar_add_member(in, (int)ci, name, fnl, L_ZIP);
			bool visited = false;
			uint64_t taken = 0;
			s = zip_visit(in, pre, &rd, csize, usize, sn, &snn, &zr, &outn, &acrc, &taken,
				      &visited, err);
			handed = visited;
			if (visited && (s != TM_OK || taken < csize || zr != 0 || outn != usize))
				P(in)->visit->drop(P(in)->visit->ud, pre); /* scanned afresh */
			if (s != TM_OK || taken < csize) {
				tm_ar_unlist_from(in, pre);
				if (s == TM_OK)
					tm_ar_input_warn(in, ci, hoff, "the archive ends inside ZIP entry '%s'",
						   name);
				free(name);
				if (s != TM_OK)
					goto out;
				break;
			}
		} else if (method == 8) {
			zr = zip_inflate(&rd, true, csize, &consumed, &outn, &acrc, sn, &snn,
					 &P(in)->work, lab, err, &s);
			if (s != TM_OK) {
				free(name);
				goto out;
			}
			uint64_t k;
			if (consumed < csize) {
				if ((s = tm_rd_skip(&rd, csize - consumed, &k, err)) != TM_OK) {
					free(name);
					goto out;
				}
				if (k < csize - consumed) {
					tm_ar_input_warn(in, ci, hoff, "the archive ends inside ZIP entry '%s'",
						   name);
					free(name);
					break;
				}
			}
		} else {
			if (csize != usize) {
				tm_ar_set_cfatal(in, ci,
					   "trace_processor aborts (PERFETTO_CHECK failure) on this "
					   "archive",
					   "byte 0x%" PRIx64 ": stored entry %s with compressed size "
					   "%" PRIu64 " != uncompressed size %" PRIu64,
					   hoff, name, csize, usize);
				header_error = true;
				free(name);
				goto out;
			}
			acrc = 0;
			uint64_t left = csize;
			bool trunc = false;
			while (left) {
				if ((s = tm_rd_fill(&rd, err)) != TM_OK) {
					free(name);
					goto out;
				}
				if (!rd.n) {
					trunc = true;
					break;
				}
				size_t k = left < rd.n ? (size_t)left : rd.n;
				if (!hidden) {
					acrc = tm_crc32(acrc, rd.p, k);
					capture(sn, &snn, rd.p, k);
				}
				rd.p += k;
				rd.n -= k;
				rd.off += k;
				left -= k;
			}
			if (trunc) {
				tm_ar_input_warn(in, ci, hoff, "the archive ends inside ZIP entry '%s'", name);
				free(name);
				break;
			}
			outn = csize;
		}
		size_t mi = pre;
		if (mi == SIZE_MAX) {
			if (tm_ar_too_many(in, err, &s)) {
				free(name);
				goto out;
			}
			mi = tm_ar_add_member(in, (int)ci, name, fnl, L_ZIP);
		}
		struct tm_member *m = &in->members[mi];
		struct loc *l = &P(in)->locs[mi];
		m->is_hidden = hidden;
		m->index = index;
		m->stored_size = csize;
		l->off = doff;
		l->len = csize;
		l->method = (int16_t)method;
		l->deflate_ok = false;
		XGROW(ents, ecap, n_ents + 1);
		ents[n_ents].mi = mi;
		ents[n_ents].err = NULL;
		ents[n_ents].handed = handed;
		/* What ZipFile::Decompress hands over. */
		if (method == 8 && usize == 0) {
			m->size = 0;
			snn = 0;
			l->method = 0;
			l->len = 0;
		} else if (method == 8) {
			if (zr != 0 || outn > usize) {
				snprintf(t, sizeof t,
					 "Zip decompression error (%d) on %s (c=%" PRIu64 ", u=%" PRIu64
					 ") (ERR:tp-corrupt)",
					 zr == 2 ? 2 : zr == 1 ? 3 : 0, name, csize, usize);
				ents[n_ents].err = xstrdup(t);
			} else if (acrc != crc) {
				snprintf(t, sizeof t,
					 "Zip CRC32 failure on %s (actual: %x, expected: %x) "
					 "(ERR:tp-corrupt)",
					 name, acrc, crc);
				ents[n_ents].err = xstrdup(t);
			}
			l->deflate_ok = !ents[n_ents].err;
			m->size = outn;
		} else {
			if (acrc != crc) {
				snprintf(t, sizeof t,
					 "Zip CRC32 failure on %s (actual: %x, expected: %x) "
					 "(ERR:tp-corrupt)",
					 name, acrc, crc);
				ents[n_ents].err = xstrdup(t);
			}
			m->size = csize;
		}
		n_ents++;
		if (!hidden)
			tm_ar_set_format(m, tm_sniff(sn, snn));
		tm_ar_publish(in, mi);
		free(name);
	}
out:
	if (header_error) {
		/* ZipReader failed while parsing: nothing was registered. */
		for (size_t e = 0; e < n_ents; e++)
			if (ents[e].handed)
				P(in)->visit->drop(P(in)->visit->ud, ents[e].mi);
		tm_ar_unlist_from(in, first_member);
	} else if (s == TM_OK) {
		/* Registration decompresses each non-hidden entry in order; the
		 * first failure stops it (that entry is already registered). */
		size_t reg = 0;
		for (size_t e = 0; e < n_ents; e++) {
			if (in->members[ents[e].mi].is_hidden)
				continue;
			reg++;
			if (ents[e].err) {
				lc_w(&P(in)->locs[ci])->reg_limit = reg;
				tm_ar_set_cfatal(in, ci, ents[e].err, "%s: bad compressed data",
					   tm_ar_disp(&in->members[ents[e].mi]));
				/* ZipTraceReader decompresses at its end of input */
				lc_w(&P(in)->locs[ci])->fatal_eof = true;
				break;
			}
		}
	}
	for (size_t e = 0; e < n_ents; e++)
		free(ents[e].err);
	free(ents);
	free(sn);
	free(lab);
	{
		enum tm_status s2 = tm_ar_gz_settle(in, ci, st, err);
		if (s == TM_OK)
			s = s2;
	}
	tm_stream_close(st);
	return s;
}

