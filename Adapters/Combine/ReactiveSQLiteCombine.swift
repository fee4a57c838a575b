// ReactiveSQLiteCombine: publishers of observations (issue 8, in progress).
