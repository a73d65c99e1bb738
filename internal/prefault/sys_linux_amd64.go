package prefault

// System call numbers, linux/amd64.
const (
	sysRead    = 0
	sysClose   = 3
	sysMadvise = 28
	sysOpenat  = 257
	errEINVAL  = 22
)
