// GRDBDifferences: our differences on GRDB observations (issue 8, in progress).
