// Tests of GRDBDifferences (issue 8, in progress).
