// Tests of sqlite-watch (issue 7, in progress).
