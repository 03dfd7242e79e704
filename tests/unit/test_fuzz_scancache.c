/* SPDX-License-Identifier: MIT */
/* tests/fuzz/regress/fuzz_scancache-* replayed under the gcc ASan build
 * through the libFuzzer target's own code (included here: its set-up
 * writes the inputs and the saved scans the inputs are spliced into);
 * tests/fuzz/regress.sh replays them through the clang-built target too. */
#include <dirent.h>

#include "../fuzz/fuzz_scancache.c"
#include "t.h"

static const char *cur;

static void
t_regress(void)
{
	size_t n = 0;
	char *d = slurp(cur, &n);
	LLVMFuzzerTestOneInput((const uint8_t *)d, n); /* aborts on a failure */
	free(d);
}

int
main(void)
{
	LLVMFuzzerInitialize(NULL, NULL);
	char rdir[4096];
	const char *top = getenv("TM_TOP");
	snprintf(rdir, sizeof rdir, "%s/tests/fuzz/regress", top && *top ? top : ".");
	DIR *dp = opendir(rdir);
	if (!dp) {
		printf("FAIL: regress: cannot open %s\n", rdir);
		return 1;
	}
	struct dirent *de;
	while ((de = readdir(dp))) {
		if (strncmp(de->d_name, "fuzz_scancache-", 15))
			continue;
		char p[8192];
		snprintf(p, sizeof p, "%s/%s", rdir, de->d_name);
		cur = p;
		printf("# %s\n", de->d_name);
		RUN(t_regress);
	}
	closedir(dp);
	return 0;
}
