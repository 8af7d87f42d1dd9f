// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * vnpu-test-summary LOG...: prints "N passed, N failed[, N skipped]" summed
 * over every kselftest "# Totals:" line in the given logs, after naming each
 * failed test and each log that reported no totals (a crashed suite), so
 * the end of a long run says what failed. Exits 0 only if nothing failed
 * and at least one suite reported.
 */
#include <stdio.h>
#include <string.h>

#include "ksft_totals.h"

int main(int argc, char **argv)
{
	struct ksft_totals t = { 0 };
	char line[4096];
	int missing = 0;

	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "r");

		if (!f) {
			fprintf(stderr, "vnpu-test-summary: cannot read %s\n", argv[i]);
			missing++;
			continue;
		}
		unsigned long suites = t.suites;

		while (fgets(line, sizeof(line), f)) {
			ksft_totals_add_line(&t, line);
			if (ksft_line_is_failure(line))
				printf("FAILED %s: %s%s", argv[i], line,
				       strchr(line, '\n') ? "" : "\n");
		}
		fclose(f);
		/*
		 * Not counted here: the runner's own checks (vm-checks,
		 * host-checks) count the suite's exit status once.
		 */
		if (t.suites == suites)
			printf("FAILED %s: no \"# Totals:\" line (suite crashed or was cut off)\n",
			       argv[i]);
	}
	if (!t.suites)
		fprintf(stderr, "vnpu-test-summary: no test results found\n");
	/* An unreadable log is a suite whose results were lost: count it failed. */
	t.error += missing;
	if (t.skip)
		printf("%lu passed, %lu failed, %lu skipped\n", ksft_totals_passed(&t),
		       ksft_totals_failed(&t), t.skip);
	else
		printf("%lu passed, %lu failed\n", ksft_totals_passed(&t), ksft_totals_failed(&t));
	return ksft_totals_failed(&t) || !t.suites;
}
