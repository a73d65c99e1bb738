package prefault

// System call numbers, linux/arm64.
const (
	sysOpenat  = 56
	sysClose   = 57
	sysRead    = 63
	sysMadvise = 233
	errEINVAL  = 22
)
