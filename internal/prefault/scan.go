package prefault

// The parsers below read /proc/self/maps and /proc/self/environ without
// the standard library (see doc.go); they have no build constraint so their
// tests run everywhere.

// span is a range of virtual addresses, [lo, hi).
type span struct{ lo, hi uintptr }

// exeSpans returns the non-writable private mappings of the file mapped
// first in maps (the text of /proc/self/maps), which is the executable: a
// static or PIE Go binary is mapped below its heap, its mmaps and the vDSO.
// Writable mappings are left out: asking for those would copy each page.
func exeSpans(maps []byte) []span {
	var exe []byte
	var out []span
	for len(maps) > 0 {
		var line []byte
		line, maps = cut(maps, '\n')
		s, perms, path, ok := parseLine(line)
		if !ok || len(path) == 0 || path[0] != '/' {
			continue
		}
		if exe == nil {
			exe = path
		}
		if string(path) == string(exe) && perms[0] == 'r' && perms[1] != 'w' && perms[3] == 'p' {
			out = append(out, s)
		}
	}
	return out
}

// spanAt returns the mapping in maps that holds addr.
func spanAt(maps []byte, addr uintptr) (span, bool) {
	for len(maps) > 0 {
		var line []byte
		line, maps = cut(maps, '\n')
		if s, _, _, ok := parseLine(line); ok && s.lo <= addr && addr < s.hi {
			return s, true
		}
	}
	return span{}, false
}

// parseLine splits a maps line into its range, permissions ("r-xp") and
// path (empty for an anonymous mapping).
func parseLine(line []byte) (s span, perms, path []byte, ok bool) {
	lo, rest, ok := hex(line)
	if !ok || len(rest) == 0 || rest[0] != '-' {
		return span{}, nil, nil, false
	}
	hi, rest, ok := hex(rest[1:])
	if !ok || len(rest) < 5 || rest[0] != ' ' || hi <= lo {
		return span{}, nil, nil, false
	}
	return span{lo, hi}, rest[1:5], field(rest[5:], 4), true // path: after offset, dev and inode
}

// optOut is the environment entry that turns prefaulting off.
const optOut = "AGENTLS_PREFAULT=off"

// optOutScan finds optOut in /proc/self/environ (NUL-separated entries)
// read in chunks: matched counts the bytes of the current entry that match
// so far, -1 once it cannot.
type optOutScan struct{ matched int }

// feed scans the next chunk and reports whether an entry ending in it is
// optOut.
func (s *optOutScan) feed(b []byte) bool {
	for _, c := range b {
		switch {
		case c == 0:
			if s.matched == len(optOut) {
				return true
			}
			s.matched = 0
		case s.matched >= 0 && s.matched < len(optOut) && c == optOut[s.matched]:
			s.matched++
		default:
			s.matched = -1
		}
	}
	return false
}

// end reports whether the last entry, unterminated, is optOut.
func (s *optOutScan) end() bool { return s.matched == len(optOut) }

// cut splits b at the first sep, dropping it.
func cut(b []byte, sep byte) (before, after []byte) {
	for i, c := range b {
		if c == sep {
			return b[:i], b[i+1:]
		}
	}
	return b, nil
}

// field returns what follows the n-th run of spaces in b, up to the end of
// the line: the path of a maps line, which may itself contain spaces.
func field(b []byte, n int) []byte {
	for ; n > 0; n-- {
		i := 0
		for i < len(b) && b[i] != ' ' {
			i++
		}
		for i < len(b) && b[i] == ' ' {
			i++
		}
		b = b[i:]
	}
	return b
}

// hex parses the lower-case hex number at the start of b.
func hex(b []byte) (v uintptr, rest []byte, ok bool) {
	i := 0
	for ; i < len(b); i++ {
		c := b[i]
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | uintptr(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | uintptr(c-'a'+10)
		default:
			return v, b[i:], i > 0
		}
	}
	return v, b[i:], i > 0
}
