/* SPDX-License-Identifier: MIT */
/* Hand-built TAR fixtures for the archive tests: headers byte by byte, so
 * every reader rule can be exercised (bad magic, versions, size encodings,
 * GNU long names, PAX, links).  Written at test time into a temp dir. */
#ifndef TM_TEST_TARFIX_H
#define TM_TEST_TARFIX_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FX_UNUSED __attribute__((unused))

struct fx {
	unsigned char *d;
	size_t n, cap;
};

FX_UNUSED static void
fx_add(struct fx *f, const void *p, size_t n)
{
	if (f->n + n > f->cap) {
		f->cap = (f->n + n) * 2 + 4096;
		f->d = realloc(f->d, f->cap);
	}
	memcpy(f->d + f->n, p, n);
	f->n += n;
}

FX_UNUSED static void
fx_zero(struct fx *f, size_t n)
{
	unsigned char z[512] = {0};
	while (n) {
		size_t k = n < 512 ? n : 512;
		fx_add(f, z, k);
		n -= k;
	}
}

/* One header; magic 0 = POSIX "ustar\0" "00", 1 = GNU "ustar  \0". */
FX_UNUSED static void
fx_hdr(struct fx *f, const char *name, const char *prefix, unsigned long long size, char type,
       int magic)
{
	unsigned char h[512] = {0};
	snprintf((char *)h, 100, "%s", name);
	memcpy(h + 100, "0000644", 8);
	snprintf((char *)h + 124, 12, "%011llo", size);
	h[156] = (unsigned char)type;
	if (magic == 1)
		memcpy(h + 257, "ustar  \0", 8);
	else
		memcpy(h + 257, "ustar\0" "00", 8);
	if (prefix)
		snprintf((char *)h + 345, 155, "%s", prefix);
	memset(h + 148, ' ', 8);
	unsigned sum = 0;
	for (int i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
	fx_add(f, h, 512);
}

FX_UNUSED static void
fx_file(struct fx *f, const char *name, const void *data, size_t n)
{
	fx_hdr(f, name, NULL, n, '0', 0);
	fx_add(f, data, n);
	fx_zero(f, (512 - n % 512) % 512);
}

FX_UNUSED static void
fx_end(struct fx *f)
{
	fx_zero(f, 1024);
}

static char fx_dir[256];

FX_UNUSED static const char *
fx_path(const char *name)
{
	static char p[512];
	if (!fx_dir[0]) {
		snprintf(fx_dir, sizeof fx_dir, "/tmp/tm_unit_XXXXXX");
		if (!mkdtemp(fx_dir))
			abort();
	}
	snprintf(p, sizeof p, "%s/%s", fx_dir, name);
	return p;
}

FX_UNUSED static const char *
fx_write(const char *name, const void *d, size_t n)
{
	const char *p = fx_path(name);
	FILE *fp = fopen(p, "wb");
	if (!fp)
		abort();
	if (n)
		fwrite(d, 1, n, fp);
	fclose(fp);
	return p;
}

FX_UNUSED static void
fx_cleanup(void)
{
	if (fx_dir[0]) {
		char cmd[600];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", fx_dir);
		if (system(cmd) != 0)
			fprintf(stderr, "cleanup failed\n");
	}
}
#endif
