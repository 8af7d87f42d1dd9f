// SPDX-License-Identifier: MIT
/*
 * Copyright (C) 2026 The vnpu authors
 *
 * Description: host unit test of the kselftest totals parser that turns
 * every suite's results into the one "N passed, N failed" line.
 */
#include "kselftest_harness.h"
#include "ksft_totals.h"

TEST(sums_totals_lines)
{
	struct ksft_totals t = { 0 };

	ASSERT_EQ(1, ksft_totals_add_line(&t,
		"# Totals: pass:3 fail:1 xfail:2 xpass:0 skip:4 error:0\n"));
	ASSERT_EQ(1, ksft_totals_add_line(&t,
		"[default/param] # Totals: pass:10 fail:0 xfail:0 xpass:1 skip:0 error:2"));
	EXPECT_EQ(2, t.suites);
	EXPECT_EQ(15, ksft_totals_passed(&t));
	EXPECT_EQ(4, ksft_totals_failed(&t));
	EXPECT_EQ(4, t.skip);
}

TEST(ignores_other_lines)
{
	struct ksft_totals t = { 0 };

	EXPECT_EQ(0, ksft_totals_add_line(&t, "ok 1 vnpu.first_device.get_param\n"));
	EXPECT_EQ(0, ksft_totals_add_line(&t, "# FAILED: 1 / 2 tests passed.\n"));
	EXPECT_EQ(0, ksft_totals_add_line(&t, ""));
	EXPECT_EQ(0, t.suites);
	EXPECT_EQ(0, ksft_totals_passed(&t));
}

TEST(rejects_mangled_lines)
{
	struct ksft_totals t = { 0 };

	EXPECT_EQ(0, ksft_totals_add_line(&t, "# Totals: pass:1 fail:0\n"));
	EXPECT_EQ(0, ksft_totals_add_line(&t,
		"# Totals: pass:1 fail:0 xfail:0 xpass:0 skip:0 error:0 trailing\n"));
	EXPECT_EQ(0, ksft_totals_add_line(&t,
		"# Totals: pass:x fail:0 xfail:0 xpass:0 skip:0 error:0\n"));
	EXPECT_EQ(0, t.suites);
}

TEST(names_failures_but_not_skips)
{
	EXPECT_EQ(1, ksft_line_is_failure("not ok 3 vnpu.bo.create\n"));
	EXPECT_EQ(1, ksft_line_is_failure("[smi/smi] not ok 16 run smi timed out\n"));
	EXPECT_EQ(0, ksft_line_is_failure("not ok 4 needs root # SKIP not root\n"));
	EXPECT_EQ(0, ksft_line_is_failure("ok 5 fine\n"));
	EXPECT_EQ(0, ksft_line_is_failure("# not ok in a comment\n"));
	EXPECT_EQ(0, ksft_line_is_failure("[unterminated not ok 1\n"));
	EXPECT_EQ(0, ksft_line_is_failure(""));
}

TEST(large_counts_do_not_wrap)
{
	struct ksft_totals t = { 0 };

	for (int i = 0; i < 1000; i++)
		ASSERT_EQ(1, ksft_totals_add_line(&t,
			"# Totals: pass:100000 fail:0 xfail:0 xpass:0 skip:0 error:0"));
	EXPECT_EQ(100000000UL, ksft_totals_passed(&t));
}

TEST_HARNESS_MAIN
