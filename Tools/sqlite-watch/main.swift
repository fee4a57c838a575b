// sqlite-watch (issue 7, in progress).
print("sqlite-watch is not built yet")
