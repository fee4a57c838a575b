// Tests of ReactiveSQLiteCombine (issue 8, in progress).
